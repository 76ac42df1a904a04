/**
 * The benchmark's ceiling: a plain Express handler answering GET /api/municipios/ with a fixed page
 * (page 1 of the real list, read once at start). No validation, no logging, no lookup.
 */
import express from 'express';

const [port, bodyFile] = process.argv.slice(2);
const body = (await import('node:fs')).readFileSync(bodyFile!, 'utf8');
const app = express();
app.disable('x-powered-by');
app.get('/api/municipios/', (_req, res) => {
  res.type('application/json').send(body);
});
app.listen(Number(port), '127.0.0.1', () => console.log('listening'));
