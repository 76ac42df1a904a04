/**
 * The stateful msw mock opts numbers out as the server does (issue 42, section 3): a conversation's
 * number or a number by hand, skipped and counted by the preview and the send, never answered in the
 * inbox, and still skipped after its contact is erased (the server keeps a keyed hash; the mock keeps
 * the opt-out). Each answer is checked against the contract. The server's side: sms-suppression.test.ts.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeEach, describe, expect, it } from 'vitest';
import { unwrap, type PalanqueClient } from '../sdk/index.js';
import { failure, useStatefulMock } from './helpers/msw.js';
import contract from '../sdk/openapi.json' with { type: 'json' };

const { signedIn } = useStatefulMock();
let owner: PalanqueClient;
let operator: PalanqueClient;
let stranger: PalanqueClient;

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (instance: Ajv2020) => void)(ajv);
ajv.addSchema(contract as object, 'contract');
const optOutValid = ajv.getSchema('contract#/components/schemas/SmsOptOut')!;

beforeEach(async () => {
  [owner, operator, stranger] = [await signedIn('carlos.pereira'), await signedIn('marcos.oliveira'), await signedIn('joana.lima')];
});

const preview = (client: PalanqueClient, numbers: string[]) =>
  client.POST('/api/sms/campaigns/preview/', { body: { titulo: 'Convite', credencial: 3, mensagem: { recipient_list_str: numbers.join(', '), mensagem: 'Reunião às 19h' } } });

describe('opting out in the stateful mock', () => {
  it("an operator opts a conversation's number out (masked); it can no longer be answered, and campaigns skip it", async () => {
    const [conversation] = unwrap(await operator.GET('/api/chat/conversations/', { params: { query: { entity_id: '12' } } })).results;
    const path = { params: { path: { conversation_id: conversation!.id } } };
    const opted = await operator.POST('/api/chat/conversations/{conversation_id}/opt_out/', path);
    expect(opted.response.status).toBe(201);
    expect(opted.data!.data).toMatchObject({ phone: '+55*******4321', source: 'conversation', keyword: null, phrase: null });
    expect(optOutValid(opted.data!.data), JSON.stringify(optOutValid.errors)).toBe(true);
    const again = await owner.POST('/api/chat/conversations/{conversation_id}/opt_out/', path);
    expect(again.response.status).toBe(200);
    expect(again.data!.data.phone).toBe('+5511987654321');
    expect(await failure(stranger.POST('/api/chat/conversations/{conversation_id}/opt_out/', path))).toMatchObject({ status: 404 });

    const refused = await failure(operator.POST('/api/chat/conversations/{conversation_id}/messages/', { ...path, body: { text: 'Oi' } }));
    expect(refused).toMatchObject({ status: 422, details: [expect.objectContaining({ rule: 'not_opted_out' })] });
    expect(unwrap(await preview(owner, ['+5511987654321', '+5511987650002']))).toMatchObject({ messages: 1, opted_out_skipped: 1 });
  });

  it('a number opted out by hand (201, then 200) is skipped; an unreadable one is 422 phone_number; a stranger gets 404', async () => {
    const first = await operator.POST('/api/sms/opt_outs/', { body: { entity_id: 12, phone: '(11) 98765-0002' } });
    expect(first.response.status).toBe(201);
    expect(first.data!.data).toMatchObject({ phone: '+5511987650002', source: 'manual', keyword: null });
    expect(optOutValid(first.data!.data), JSON.stringify(optOutValid.errors)).toBe(true);
    expect((await owner.POST('/api/sms/opt_outs/', { body: { entity_id: 12, phone: '+5511987650002' } })).response.status).toBe(200);
    expect(await failure(owner.POST('/api/sms/opt_outs/', { body: { entity_id: 12, phone: '12345' } }))).toMatchObject({ status: 422, details: [expect.objectContaining({ field: 'phone', rule: 'phone_number' })] });
    expect(await failure(stranger.POST('/api/sms/opt_outs/', { body: { entity_id: 12, phone: '+5511987650002' } }))).toMatchObject({ status: 404 });

    expect(unwrap(await preview(owner, ['+5511987650002', '+5511987650003']))).toMatchObject({ messages: 1, opted_out_skipped: 1 });
    const alone = await failure(owner.POST('/api/sms/list_credentials/', { body: { titulo: 'Só ele', credencial: 3, mensagem: { recipient_list_str: '+5511987650002', mensagem: 'Oi' } } }));
    expect(alone).toMatchObject({ status: 422, details: [expect.objectContaining({ rule: 'not_opted_out' })] });
  });

  it('erasing an opted-out contact keeps it suppressed (suppression_kept), and a pasted list still skips it', async () => {
    const contact = unwrap(await owner.POST('/api/contacts/', { body: { entity_id: 12, phone: '(11) 98765-0009', name: 'Ana Lima' } }));
    unwrap(await owner.POST('/api/sms/opt_outs/', { body: { entity_id: 12, phone: contact!.phone } }));
    const erased = unwrap(await owner.POST('/api/contacts/{contact_id}/erase/', { params: { path: { contact_id: contact!.id } }, body: { reason: 'LGPD-42' } }));
    expect(erased).toMatchObject({ erased: true, suppression_kept: true });
    expect(unwrap(await preview(owner, [contact!.phone]))).toMatchObject({ messages: 0, opted_out_skipped: 1 });
  });
});
