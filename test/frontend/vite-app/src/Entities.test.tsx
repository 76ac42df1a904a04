import { fireEvent, render, screen } from '@testing-library/react';
import { expect, it } from 'vitest';
import { createApiClient, login } from '@palanque/sdk';
import { DEFAULT_BASE_URL, DEFAULT_MOCK_PASSWORD, override } from '@palanque/sdk/msw';
import { Entities } from './Entities.tsx';
import { server } from './setup-tests.ts';

async function signedIn() {
  const api = createApiClient({ baseUrl: DEFAULT_BASE_URL, retry: false });
  await login(api, 'ana.souza', DEFAULT_MOCK_PASSWORD);
  return api;
}

it('lists the demo entities, and lists one added through the form after them', async () => {
  render(<Entities api={await signedIn()} />);
  expect(await screen.findByText('Maria da Silva Santos')).toBeDefined();
  fireEvent.change(screen.getByLabelText('Nome'), { target: { value: 'Renata Alves' } });
  fireEvent.click(screen.getByRole('button', { name: 'Adicionar' }));
  expect(await screen.findByText('Renata Alves')).toBeDefined();
  expect(screen.getByText('Maria da Silva Santos')).toBeDefined();
});

it('starts again from the demo data after a reset: the entity added before is gone', async () => {
  render(<Entities api={await signedIn()} />);
  expect(await screen.findByText('Maria da Silva Santos')).toBeDefined();
  expect(screen.queryByText('Renata Alves')).toBeNull();
});

it("shows the server's error when a create is refused", async () => {
  server.use(override('addEntity', 422));
  render(<Entities api={await signedIn()} />);
  await screen.findByText('Maria da Silva Santos');
  fireEvent.change(screen.getByLabelText('Nome'), { target: { value: 'Renata Alves' } });
  fireEvent.click(screen.getByRole('button', { name: 'Adicionar' }));
  expect((await screen.findByRole('alert')).textContent).toMatch(/^validation_failed: /);
});
