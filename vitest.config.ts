import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The mock and lint tests start real processes (Prism, Spectral, openapi-typescript).
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
