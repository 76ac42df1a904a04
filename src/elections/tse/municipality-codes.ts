/**
 * The electoral court's 5-digit municipality codes (SG_UE of a municipal election, CD_MUNICIPIO
 * elsewhere) and how the candidacy import maps them to IBGE's (issue 42, section 7).
 *
 * What was verified, and on what:
 * - The fifth digit is a modulo-11 check digit of the first four, weights 2, 3, 4, 5 from the right, a
 *   remainder of 0 or 1 giving 0 (`courtCheckDigit`): it holds for 5,740 of the 5,746 codes of the court's
 *   municipality list in its 2020 results file (detalhe_votacao_munzona_2020_BRASIL.csv, as tbrugz/ribge
 *   extracted it to doc/tse-municipios.csv); the 6 exceptions are 3 cities abroad (ZZ) and 3 municipalities
 *   of the state lists (RS 89247 Santa Cecília do Sul, MT 89843 Santo Antônio do Leste and 89960 Rondolândia).
 * - The first four digits are the municipality's SIAFI (TOM) code, the list's `siafi_id`, for 4,155 of
 *   the 5,570 municipalities only (São Paulo 7107: 71072; Campinas 6291: 62910; São Luiz do Paraitinga
 *   7101: 71013). For the other 1,415 the court's code is unrelated, and 56 of those court codes are
 *   another municipality's SIAFI-derived code in the same state (RO: Cabixi's court code 00450 is São
 *   Miguel do Guaporé's SIAFI 0045 with its digit). So a code alone does not identify a municipality.
 *
 * What holds, then, per unit (`matchUnit`):
 * - A code and a name that agree (the SIAFI-derived code's municipality has the unit's normalised name) map
 *   by code: `code`.
 * - A code whose municipality's name differs, when no municipality of the state has the unit's name, maps
 *   by code too if the two spellings are close (one holds the other, or at most SPELLING_EDITS edits
 *   apart: SÃO LUÍS DO PARAITINGA is IBGE's São Luiz do Paraitinga, ASSÚ is Açu): `code`, and the report
 *   lists it with both names. Spellings further apart leave it unmatched (RO's court code 00337, ALVORADA
 *   DO OESTE, is Alta Floresta D'Oeste's SIAFI-derived code).
 * - When the code's municipality and the name's differ, the name wins (the code may be one of the 56
 *   collisions): `name`, reported. A unit the code does not find but the name does: `name`, reported.
 * - Neither: unmatched (codigo_ibge null), reported. A unit of state `ZZ` (voters abroad) has no IBGE
 *   code by nature: `abroad`, counted apart and never reported as unmatched.
 *
 * On the court's 2020 list against the municipality list (/work/shared/data/municipios.csv) this maps 4,155
 * units by code (12 of them spellings the name match alone missed), 1,411 by name (55 where the code named
 * another municipality), leaves 4 unmatched (ELDORADO DOS CARAJÁS, MUQUÉM DO SÃO FRANCISCO, TABOCÃO, ALVORADA
 * DO OESTE) and 176 abroad, and maps none to a municipality other than the one the court's crosswalk gives.
 */
import type { Municipality } from '../../municipalities/rules.js';
import { municipalityKey } from './names.js';

/** The check digit of a court municipality code's first four digits (see the top of this file). */
export function courtCheckDigit(base: number): number {
  const digits = String(base).padStart(4, '0');
  let sum = 0;
  for (let index = 0; index < 4; index++) sum += Number(digits[3 - index]) * (index + 2);
  const remainder = sum % 11;
  return remainder < 2 ? 0 : 11 - remainder;
}

/** The court's 5-digit code a SIAFI code would have (7107: 71072), as a number. */
export function courtCodeOfSiafi(siafi: number): number {
  return siafi * 10 + courtCheckDigit(siafi);
}

/** Whether a court municipality code's last digit checks (leading zeros optional: "06882" and "6882" alike). */
export function hasValidCheckDigit(code: string): boolean {
  if (!/^\d{1,5}$/.test(code)) return false;
  const value = Number(code);
  return value % 10 === courtCheckDigit(Math.trunc(value / 10));
}

/** A municipality as the matching reads it. */
export type IndexedMunicipality = Pick<Municipality, 'codigo_ibge' | 'nome' | 'codigo_uf'> & { siafi_id: number | null };

/** How a unit was mapped. */
export type UnitMatch =
  | { by: 'code'; codigo_ibge: number; nome: string; spelling_differs: boolean }
  | { by: 'name'; codigo_ibge: number; nome: string; code_named: { codigo_ibge: number; nome: string } | null }
  | { by: 'abroad' }
  | { by: 'none' };

/** The municipalities of each state (IBGE state code) by SIAFI-derived court code and by municipalityKey of the name. */
export class MunicipalityIndex {
  private readonly byCode = new Map<number, Map<number, IndexedMunicipality>>();
  private readonly byName = new Map<number, Map<string, IndexedMunicipality>>();

  constructor(municipalities: Iterable<IndexedMunicipality>) {
    for (const municipality of municipalities) {
      const state = municipality.codigo_uf;
      if (municipality.siafi_id !== null) {
        const codes = this.byCode.get(state) ?? new Map<number, IndexedMunicipality>();
        codes.set(courtCodeOfSiafi(municipality.siafi_id), municipality);
        this.byCode.set(state, codes);
      }
      const names = this.byName.get(state) ?? new Map<string, IndexedMunicipality>();
      names.set(municipalityKey(municipality.nome), municipality);
      this.byName.set(state, names);
    }
  }

  /** How the court's unit (state acronym, code, name) maps; `state` is the IBGE state code, undefined for ZZ and the like. */
  matchUnit(state: number | undefined, sgUf: string, sgUe: string, nmUe: string): UnitMatch {
    if (sgUf === 'ZZ') return { by: 'abroad' };
    if (state === undefined) return { by: 'none' };
    const byCode = /^\d{1,5}$/.test(sgUe) ? this.byCode.get(state)?.get(Number(sgUe)) : undefined;
    const byName = this.byName.get(state)?.get(municipalityKey(nmUe));
    if (byCode && (byName ? byName.codigo_ibge === byCode.codigo_ibge : closeSpellings(nmUe, byCode.nome))) {
      return { by: 'code', codigo_ibge: byCode.codigo_ibge, nome: byCode.nome, spelling_differs: !byName };
    }
    if (byName) return { by: 'name', codigo_ibge: byName.codigo_ibge, nome: byName.nome, code_named: byCode ? { codigo_ibge: byCode.codigo_ibge, nome: byCode.nome } : null };
    return { by: 'none' };
  }
}

/** How many single-letter edits two spellings of one name may be apart (Luís and Luiz, Assú and Açu: 1). */
export const SPELLING_EDITS = 2;

/** Whether two names are spellings of one (see the top of this file): one's key holds the other's, or they are at most SPELLING_EDITS edits apart. */
export function closeSpellings(a: string, b: string): boolean {
  const [x, y] = [municipalityKey(a), municipalityKey(b)];
  if (x.includes(y) || y.includes(x)) return true;
  if (Math.abs(x.length - y.length) > SPELLING_EDITS) return false;
  let previous = Array.from({ length: y.length + 1 }, (_, index) => index);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[y.length]! <= SPELLING_EDITS;
}
