/**
 * The stateful msw handlers apply the synthetic-content rules as the server does (issue 42, section 8;
 * packages/rules/src/synthetic-content.ts is the one rule both import): a declared deepfake is 422 `deepfake_banned`
 * whatever the mode, the preview included; an unlabelled declared campaign carries the
 * `synthetic_content_label` warning naming the technology, refused under `enforce`; a campaign keeps
 * its declaration. Entity 12 (the demo's Maria Santos) and its credential 3.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { unwrap, type PalanqueClient } from '../sdk/index.js';
import { failure, useStatefulMock } from './helpers/msw.js';
import { syntheticLabel } from '@palanque/rules/synthetic-content';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const { signedIn } = useStatefulMock();
let api: PalanqueClient;

beforeEach(async () => {
  api = await signedIn('ana.souza');
});

const body = (mensagem: string, synthetic_content?: Json) =>
  ({ titulo: 'Praça nova', credencial: 3, ...(synthetic_content ? { synthetic_content } : {}), mensagem: { mensagem, recipient_list_str: '+5511987654321' } }) as Json;
const setMode = async (mode: 'off' | 'warn' | 'enforce') => unwrap(await api.PUT('/api/sms/compliance/', { params: { query: { entity_id: '12' } }, body: { mode, window: null } } as never));
const UNLABELLED = 'Veja como a praça pode ficar: palanque.app/p/42';

describe('synthetic content in the stateful mock', () => {
  it('refuses a declared deepfake under every mode, the preview included', async () => {
    for (const mode of ['off', 'warn', 'enforce'] as const) {
      await setMode(mode);
      for (const path of ['/api/sms/list_credentials/', '/api/sms/campaigns/preview/'] as const) {
        const error = await failure(api.POST(path, { body: body(syntheticLabel('Midjourney'), { technology: 'Midjourney', deepfake: true }) } as never));
        expect(error, `${mode} ${path}`).toMatchObject({ status: 422, details: [expect.objectContaining({ field: 'synthetic_content.deepfake', rule: 'deepfake_banned' })] });
      }
    }
  });

  it('warns of an unlabelled declared campaign under warn, keeps the declaration, and refuses it under enforce', async () => {
    await setMode('warn');
    const preview = unwrap(await api.POST('/api/sms/campaigns/preview/', { body: body(UNLABELLED, { technology: 'Midjourney' }) } as never)) as Json;
    expect(preview.compliance.warnings).toContainEqual(expect.objectContaining({ rule: 'synthetic_content_label', technology: 'Midjourney' }));
    const sent = unwrap(await api.POST('/api/sms/list_credentials/', { body: body(UNLABELLED, { technology: 'Midjourney' }) } as never)) as Json;
    expect(sent.synthetic_content).toEqual({ technology: 'Midjourney' });
    const report = unwrap(await api.GET('/api/sms/campaigns/{campaign_id}/', { params: { path: { campaign_id: sent.id } } } as never)) as Json;
    expect(report.synthetic_content).toEqual({ technology: 'Midjourney' });
    const labelled = unwrap(await api.POST('/api/sms/campaigns/preview/', { body: body(syntheticLabel('Midjourney'), { technology: 'Midjourney' }) } as never)) as Json;
    expect(labelled.compliance.warnings.map((warning: Json) => warning.rule)).not.toContain('synthetic_content_label');

    await setMode('enforce');
    const refused = await failure(api.POST('/api/sms/list_credentials/', { body: body(UNLABELLED, { technology: 'Midjourney' }) } as never));
    expect(refused.status).toBe(422);
    expect(refused.details).toContainEqual(expect.objectContaining({ field: 'mensagem.mensagem', rule: 'synthetic_content_label', value: 'Midjourney' }));
  });
});
