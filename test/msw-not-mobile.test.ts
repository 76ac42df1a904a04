/**
 * The stateful msw mock (sdk/mock/) mirrors issue 42's `not_mobile` rule (packages/rules/src/phones.ts):
 * landlines, toll-free and foreign numbers are skipped by a preview and a send, counted and named masked in
 * the preview, the answer and the report; a list of none but them is 422 `not_mobile`; a contact must be a
 * mobile (createContact 422, an import line rejected) and reads `can_receive_sms`. The mock's check is the
 * simpler shape the server's libphonenumber metadata describes (+55, a 2-digit area code, 9 and 8 digits).
 * Every answer is checked against the contract.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeEach, describe, expect, it } from 'vitest';
import { unwrap, type PalanqueClient } from '../sdk/index.js';
import { failure, useStatefulMock } from './helpers/msw.js';
import contract from '../sdk/openapi.json' with { type: 'json' };

const { signedIn, server } = useStatefulMock();
let api: PalanqueClient;
const answers: Array<Promise<{ method: string; path: string; status: number; body: unknown }>> = [];
server.events.on('response:mocked', ({ request, response }) => {
  const json = (response.headers.get('content-type') ?? '').includes('json');
  answers.push(response.clone().text().then((text) => ({ method: request.method.toLowerCase(), path: new URL(request.url).pathname, status: response.status, body: text && json ? JSON.parse(text) : undefined })));
});

beforeEach(async () => {
  api = await signedIn('carlos.pereira');
});

const NOT_MOBILE = '(11) 3222-1234, 0800 123 4567, +1 202 555 0143';
const MASKED = ['+55******1234', '+55******4567', '+1******0143'];
const campaign = (list: string) => ({ titulo: 'Comício', credencial: 3, mensagem: { recipient_list_str: list, mensagem: 'Comício hoje às 19h' } });

describe('numbers that cannot receive an SMS, in the mock', () => {
  it('previews and sends only the mobile, counting and naming the others, and refuses a list of none but them', async () => {
    expect(await failure(api.POST('/api/sms/campaigns/preview/', { body: campaign(NOT_MOBILE) }))).toMatchObject({
      status: 422,
      details: [expect.objectContaining({ field: 'mensagem.recipient_list_str', rule: 'not_mobile', value: 3 })],
    });
    expect(await failure(api.POST('/api/sms/list_credentials/', { body: campaign(NOT_MOBILE) }))).toMatchObject({ status: 422, details: [expect.objectContaining({ rule: 'not_mobile' })] });

    // The numbers are what is judged here, not consent or the window: a platform admin relaxes entity 12 to warn.
    const admin = await signedIn('ana.souza');
    unwrap(await admin.PUT('/api/sms/compliance/', { params: { query: { entity_id: '12' } }, body: { mode: 'warn' } }));
    const list = `${NOT_MOBILE}, (11) 98765-0001`;
    const preview = unwrap(await api.POST('/api/sms/campaigns/preview/', { body: campaign(list) }));
    expect(preview).toMatchObject({ messages: 1, not_mobile_skipped: 3, not_mobile_examples: MASKED });
    const sent = unwrap(await api.POST('/api/sms/list_credentials/', { body: campaign(list) }));
    expect(sent).toMatchObject({ accepted: 1, not_mobile_skipped: 3, not_mobile_examples: MASKED });
    const report = unwrap(await api.GET('/api/sms/campaigns/{campaign_id}/', { params: { path: { campaign_id: sent.id } } }));
    expect(report).toMatchObject({ accepted: 1, not_mobile_skipped: 3, not_mobile_examples: MASKED });
    const messages = unwrap(await api.GET('/api/sms/campaigns/{campaign_id}/messages/', { params: { path: { campaign_id: sent.id } } }));
    expect(messages.results.map((message) => message.recipient)).toEqual(['+5511987650001']);
  });

  it('refuses a landline as a contact, rejects its import line, and flags a mobile as reachable', async () => {
    expect(await failure(api.POST('/api/contacts/', { body: { entity_id: 12, phone: '(11) 3222-1234' } }))).toMatchObject({
      status: 422,
      details: [expect.objectContaining({ field: 'phone', rule: 'not_mobile' })],
    });
    const added = unwrap(await api.POST('/api/contacts/', { body: { entity_id: 12, phone: '(11) 98765-4399' } }));
    expect(added).toMatchObject({ phone: '+5511987654399', can_receive_sms: true });
    const csv = 'telefone,nome\n(11) 3222-1234,Comitê\n(11) 98765-0003,Paulo\n';
    const report = unwrap(await api.POST('/api/contacts/import/', { params: { query: { entity_id: '12' } }, body: csv, bodySerializer: (body: unknown) => body as string, headers: { 'Content-Type': 'text/csv' } }));
    expect(report).toMatchObject({ inserted: 1, rejected: 1, rejections: [{ line: 2, reason: expect.stringContaining('not_mobile') }] });
  });

  it('answers every call with a status the operation declares and a body of its schema', async () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (instance: Ajv2020) => void)(ajv);
    ajv.addSchema(contract as object, 'contract');
    const paths = (contract as { paths: Record<string, Record<string, { responses: Record<string, { $ref?: string; content?: Record<string, { schema: object }> }> }>> }).paths;
    const checked = await Promise.all(answers);
    expect(checked.length).toBeGreaterThan(8);
    for (const { method, path, status, body } of checked) {
      const template = Object.keys(paths).find((candidate) => new RegExp(`^${candidate.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path) && paths[candidate]![method]);
      let response = paths[template!]![method]!.responses[String(status)];
      expect(response, `${method} ${path} answered ${status}`).toBeDefined();
      if (response!.$ref) response = ajv.getSchema(`contract${response!.$ref}`)?.schema as typeof response;
      const schema = response!.content?.['application/json']?.schema;
      if (!schema) continue;
      const validate = ajv.compile(JSON.parse(JSON.stringify(schema).replace(/"\$ref":"#\//g, '"$ref":"contract#/')));
      expect(validate(body), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });
});
