import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { createApiClient } from '@palanque/sdk';
import { Entities } from './Entities.tsx';

const api = createApiClient({ baseUrl: import.meta.env.VITE_PALANQUE_API_URL ?? 'http://127.0.0.1:8000', token: import.meta.env.VITE_PALANQUE_TOKEN });

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Entities api={api} />
  </StrictMode>,
);
