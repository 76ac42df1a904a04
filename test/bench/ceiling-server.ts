/**
 * The benchmark's ceiling: a plain Express app answering each benchmarked request with a fixed body
 * (the bytes Palanque itself answered, read once at start). No validation, logging, database or
 * lookup beyond one Map: the practical best a Node HTTP server does on this machine.
 *
 * Usage: ceiling-server.ts <port> <answers.json>, where answers.json maps "METHOD /path?query" to
 * { status, body }.
 */
import { readFileSync } from 'node:fs';
import express from 'express';

interface FixedAnswer {
  status: number;
  body: string;
}

const [port, answersFile] = process.argv.slice(2);
const answers = new Map<string, FixedAnswer>(Object.entries(JSON.parse(readFileSync(answersFile!, 'utf8'))));
const app = express();
app.disable('x-powered-by');
app.use((req, res) => {
  const answer = answers.get(`${req.method} ${req.originalUrl}`);
  if (!answer) return void res.status(404).end();
  res.status(answer.status).type('application/json').send(answer.body);
});
app.listen(Number(port), '127.0.0.1', () => console.log('listening'));
