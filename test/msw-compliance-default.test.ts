/**
 * The stateful msw handlers (sdk/mock/) apply the safe default as the server does (issue 42,
 * section 2; test/sms-compliance-default.test.ts): an entity never set is in `enforce`, so a campaign to
 * numbers without consent is 422 `consent_missing`; relaxing it is a platform admin's decision (403
 * `platform_admin_to_relax` for the owner); a campaign sent under `off` keeps its warnings; a campaign
 * declared non-electoral (Lei 9.504/1997 art. 36-A) goes outside the window, its declaration in its
 * report; and the preview names an invalid number beside the compliance rules broken.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { unwrap, type PalanqueClient } from '../sdk/index.js';
import { failure, useStatefulMock } from './helpers/msw.js';

const { signedIn } = useStatefulMock();
/** Carlos Pereira, owner of the demo's entity 12 (credential 3), and Ana Souza, platform admin. */
let owner: PalanqueClient;
let admin: PalanqueClient;

const settings = { params: { query: { entity_id: '12' } } };
const DECLARATION = 'Convite para audiência pública sobre o plano diretor; não pede votos.';
/** A legal propaganda span that closed long ago: a send today is outside it. */
const CLOSED_WINDOW = { starts_on: '2024-08-16', ends_on: '2024-10-05' };
const campaign = (numbers: string, extra: Record<string, unknown> = {}, credencial = 3) => ({ titulo: 'Convite', credencial, mensagem: { recipient_list_str: numbers, mensagem: 'Reunião às 19h' }, ...extra });

/** A new entity of the owner, not linked to a candidacy (so no election is over for it), with a credential with a footer and a consented contact. */
async function newEntity(): Promise<{ entityId: number; credentialId: number }> {
  const entityId = unwrap(await owner.POST('/api/entidade/add/', { body: { nome: 'Ana Paula Ribeiro' } })).id;
  const credential = unwrap(await admin.POST('/api/sms/add_credential/', { body: { name: 'Campanha Ana', account_id: 'AC0f3b9c2d1e4a5b6c7d8e9f0a1b2c3d4e', sender_id: '+5511940028924', secret: 's'.repeat(32), entity_id: entityId, footer: 'Ana Paula 45. Para sair, responda SAIR' } }));
  unwrap(await owner.POST('/api/contacts/', { body: { entity_id: entityId, phone: '(11) 98765-0001', consent: { source: 'formulário do site', given_at: '2026-09-01T12:00:00Z', text: 'Aceito.' } } as never }));
  return { entityId, credentialId: credential.id };
}

beforeEach(async () => {
  owner = await signedIn('carlos.pereira');
  admin = await signedIn('ana.souza');
});

describe('the stateful mock: the safe path is the default', () => {
  it('reads enforce for an entity never set, and refuses pasted numbers without consent with 422 consent_missing', async () => {
    expect(unwrap(await owner.GET('/api/sms/compliance/', settings))).toMatchObject({ mode: 'enforce', updated_at: null });
    const refused = await failure(owner.POST('/api/sms/list_credentials/', { body: campaign('(11) 98765-0001') }));
    expect(refused).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(refused.details.map((detail) => detail.rule)).toContain('consent_missing');
  });

  it("lets only a platform admin relax the mode (403 platform_admin_to_relax for the owner); under off the warnings are kept", async () => {
    const refused = await failure(owner.PUT('/api/sms/compliance/', { ...settings, body: { mode: 'off' } }));
    expect(refused).toMatchObject({ status: 403, code: 'forbidden', details: [expect.objectContaining({ field: 'mode', rule: 'platform_admin_to_relax', value: 'off' })] });
    expect(unwrap(await admin.PUT('/api/sms/compliance/', { ...settings, body: { mode: 'off' } }))).toMatchObject({ mode: 'off' });
    const sent = unwrap(await owner.POST('/api/sms/list_credentials/', { body: campaign('(11) 98765-0001') }));
    expect(sent.warnings?.map((warning) => warning.rule)).toContain('consent_missing');
    const report = unwrap(await owner.GET('/api/sms/campaigns/{campaign_id}/', { params: { path: { campaign_id: sent.id } } }));
    expect(report.warnings).toEqual(sent.warnings);
    // The owner may tighten it again.
    expect(unwrap(await owner.PUT('/api/sms/compliance/', { ...settings, body: { mode: 'enforce' } }))).toMatchObject({ mode: 'enforce' });
  });

  it('sends a campaign declared non-electoral outside the window, its declaration in the report; consent still applies', async () => {
    const { entityId, credentialId } = await newEntity();
    unwrap(await owner.PUT('/api/sms/compliance/', { params: { query: { entity_id: String(entityId) } }, body: { mode: 'enforce', window: CLOSED_WINDOW } }));
    const outside = await failure(owner.POST('/api/sms/list_credentials/', { body: campaign('(11) 98765-0001', {}, credentialId) }));
    expect(outside.details.map((detail) => detail.rule)).toEqual(['outside_campaign_window']);
    const declared = unwrap(await owner.POST('/api/sms/list_credentials/', { body: campaign('(11) 98765-0001', { declaracao_nao_eleitoral: DECLARATION }, credentialId) }));
    const report = unwrap(await owner.GET('/api/sms/campaigns/{campaign_id}/', { params: { path: { campaign_id: declared.id } } }));
    expect(report.non_electoral_declaration).toEqual({ text: DECLARATION, declared_by: { id: expect.any(Number), display_name: 'Carlos Pereira' }, declared_at: expect.any(String) });
    const stranger = await failure(owner.POST('/api/sms/list_credentials/', { body: campaign('(21) 98765-0009', { declaracao_nao_eleitoral: DECLARATION }, credentialId) }));
    expect(stranger.details.map((detail) => detail.rule)).toEqual(['consent_missing']);
  });

  it('previews every problem at once: an invalid entry beside the compliance rules broken', async () => {
    const { entityId, credentialId } = await newEntity();
    unwrap(await owner.PUT('/api/sms/compliance/', { params: { query: { entity_id: String(entityId) } }, body: { mode: 'enforce', window: CLOSED_WINDOW } }));
    const preview = await failure(owner.POST('/api/sms/campaigns/preview/', { body: campaign('(21) 98765-0009, não é número', {}, credentialId) }));
    expect(preview).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(preview.details.map((detail) => `${detail.field}:${detail.rule}`)).toEqual([
      'mensagem.recipient_list_str:phone_number',
      'mensagem.recipient_list_str:consent_missing',
      'credencial:outside_campaign_window',
    ]);
  });
});
