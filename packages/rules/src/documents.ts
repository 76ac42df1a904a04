/**
 * The documents of a candidate entity checked by their digits, beyond the contract's patterns: a CPF and a
 * voter registration number (título de eleitor) by their check digits (@brazilian-utils/brazilian-utils,
 * the Receita Federal's and the TSE's algorithms), and a ballot number by its first digits, which are
 * the candidate's party's number. The server (src/entities/rules.ts) and the stateful mock both judge a
 * body with it, so that both refuse the same CPF with the same detail.
 */
import { isValidCpf, isValidVoterId } from '@brazilian-utils/brazilian-utils';
import type { ErrorDetail } from './error-detail.js';

/** The fields these rules read, as the contract's `CandidateEntity` types them (nulls left out). */
export interface DocumentFields {
  cpf?: string;
  titulo_eleitor?: string;
  nr_urna?: number;
  partido?: string;
}

const problem = (field: string, rule: string, message: string, value: string | number): ErrorDetail => ({ location: 'body', field, rule, message, value });

/**
 * The rules `sent` (the fields a body names) breaks; the ballot number and the party are one rule between
 * two fields, judged on `after` (the entity as it will be) whenever the body names either.
 */
export function documentProblems(sent: DocumentFields, after: DocumentFields): ErrorDetail[] {
  const found: ErrorDetail[] = [];
  if (sent.cpf !== undefined && !isValidCpf(sent.cpf)) found.push(problem('cpf', 'cpf_check_digits', 'is not a valid CPF (check digits)', sent.cpf));
  if (sent.titulo_eleitor !== undefined && !isValidVoterId(sent.titulo_eleitor)) {
    found.push(problem('titulo_eleitor', 'voter_id_check_digits', 'is not a valid voter registration number (check digits)', sent.titulo_eleitor));
  }
  const namesBallot = sent.nr_urna !== undefined || sent.partido !== undefined;
  if (namesBallot && typeof after.nr_urna === 'number' && after.partido !== undefined && !String(after.nr_urna).startsWith(after.partido)) {
    found.push(problem('nr_urna', 'party_prefix', `must start with the party number ${after.partido}`, after.nr_urna));
  }
  return found;
}
