/**
 * The stateful msw mock mirrors issue 42's calendar rules (sdk/msw-election-calendar.ts): the seeded
 * calendar, and an entity's effective window as spans with no voting day inside.
 */
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClient, login, unwrap, type PalanqueClient } from '../sdk/index.js';
import { createStatefulHandlers, DEFAULT_BASE_URL, DEFAULT_MOCK_PASSWORD } from '../sdk/msw.js';

const mock = createStatefulHandlers();
const server = setupServer(...mock.handlers);
let api: PalanqueClient;

beforeAll(async () => {
  server.listen({ onUnhandledRequest: 'error' });
  api = createApiClient({ baseUrl: DEFAULT_BASE_URL });
  await login(api, 'carlos.pereira', DEFAULT_MOCK_PASSWORD);
});

afterAll(() => server.close());

describe('the mock election calendar', () => {
  it('lists the seeded elections with inauguration days', async () => {
    const lines = unwrap(await api.GET('/api/elections/calendar/', {}));
    expect(lines.map((line) => [line.year, line.first_round_on, line.second_round_on])).toEqual([
      [2024, '2024-10-06', '2024-10-27'],
      [2026, '2026-10-04', '2026-10-25'],
      [2028, '2028-10-01', '2028-10-29'],
    ]);
    expect(lines[1]!.inaugurations).toMatchObject({ 1: '2027-01-05', 3: '2027-01-06', 6: '2027-02-01' });
  });

  it('gives every entity a window without a voting day', async () => {
    for (const id of [12, 16]) {
      const answer = await api.GET('/api/sms/compliance/', { params: { query: { entity_id: String(id) } } }).catch(() => undefined);
      if (!answer?.data) continue; // not in the caller's teams
      const window = answer.data.data.effective_window;
      if (!window) continue;
      for (const day of ['2024-10-06', '2024-10-27', '2026-10-04', '2026-10-25']) {
        expect(window.spans.some((span) => day >= span.starts_on && day <= span.ends_on)).toBe(false);
      }
    }
  });
});
