/**
 * What makes a municipality valid, shared by the import (each CSV row) and the admin create. The
 * bounds mirror the contract's Municipality schema; the code/state agreement is the IBGE rule.
 */
import type { components } from '../../sdk/schema.js';

/** A municipality as the contract has it (the model's rows have this shape). */
export type Municipality = components['schemas']['Municipality'];

/** The 27 federative units' IBGE codes. */
export const STATE_CODES: ReadonlySet<number> = new Set([
  11, 12, 13, 14, 15, 16, 17, 21, 22, 23, 24, 25, 26, 27, 28, 29, 31, 32, 33, 35, 41, 42, 43, 50, 51, 52, 53,
]);

export type StateCode = Municipality['codigo_uf'];

/** The 27 federative units by acronym, with their IBGE codes. */
export const STATE_CODE_BY_ACRONYM: ReadonlyMap<string, number> = new Map([
  ['RO', 11], ['AC', 12], ['AM', 13], ['RR', 14], ['PA', 15], ['AP', 16], ['TO', 17],
  ['MA', 21], ['PI', 22], ['CE', 23], ['RN', 24], ['PB', 25], ['PE', 26], ['AL', 27], ['SE', 28], ['BA', 29],
  ['MG', 31], ['ES', 32], ['RJ', 33], ['SP', 35],
  ['PR', 41], ['SC', 42], ['RS', 43],
  ['MS', 50], ['MT', 51], ['GO', 52], ['DF', 53],
]);

/** A number read from a file or a database is a StateCode once checked (the import and create check it). */
export function asStateCode(code: number): StateCode {
  return code as StateCode;
}

/** Brazil's extremes (Caburaí to Chuí, Serra do Divisor to the Atlantic islands). */
export const LATITUDE_RANGE = { min: -34, max: 6 } as const;
export const LONGITUDE_RANGE = { min: -74, max: -28 } as const;

export interface Problem {
  field: keyof Municipality | 'row';
  rule: string;
  message: string;
}

export function checkMunicipality(municipality: Municipality): Problem[] {
  const { codigo_ibge, nome, latitude, longitude, codigo_uf } = municipality;
  const problems: Problem[] = [];
  if (!Number.isInteger(codigo_ibge) || codigo_ibge < 1_000_000 || codigo_ibge > 9_999_999) {
    problems.push({ field: 'codigo_ibge', rule: 'seven_digits', message: 'must be a 7-digit code' });
  } else if (Math.trunc(codigo_ibge / 100_000) !== codigo_uf) {
    problems.push({ field: 'codigo_ibge', rule: 'state_prefix', message: `must start with codigo_uf (${codigo_uf})` });
  }
  if (!STATE_CODES.has(codigo_uf)) {
    problems.push({ field: 'codigo_uf', rule: 'known_state', message: 'must be one of the 27 IBGE state codes' });
  }
  if (nome.trim() === '' || nome.length > 100) {
    problems.push({ field: 'nome', rule: 'length', message: 'must be 1 to 100 characters, not blank' });
  }
  if (!inRange(latitude, LATITUDE_RANGE)) {
    problems.push({ field: 'latitude', rule: 'range', message: `must be between ${LATITUDE_RANGE.min} and ${LATITUDE_RANGE.max}` });
  }
  if (!inRange(longitude, LONGITUDE_RANGE)) {
    problems.push({ field: 'longitude', rule: 'range', message: `must be between ${LONGITUDE_RANGE.min} and ${LONGITUDE_RANGE.max}` });
  }
  return problems;
}

function inRange(value: number, range: { min: number; max: number }): boolean {
  return Number.isFinite(value) && value >= range.min && value <= range.max;
}
