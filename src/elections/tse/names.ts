/**
 * Names as the court writes them and as people type them meet here: "SANTA BÁRBARA D'OESTE" (the court,
 * upper case), "Santa Bárbara d'Oeste" (IBGE) and "santa barbara doeste" (a search box) all become the
 * same text. The import stores candidacies' names this way (nm_busca) and maps the court's municipalities
 * to IBGE's with it; the candidacy search must normalise its query with the same function.
 */

/** Apostrophes in any of their typed forms: ' ’ ‘ ` ´. */
const APOSTROPHES = /['\u2019\u2018`\u00b4]/g;
/** Anything but letters and digits: hyphens (which the court and IBGE use differently), quotes, dots. */
const SEPARATORS = /[^\p{L}\p{N}]+/gu;

/**
 * Letters and digits in lower case without accents, one space between words; apostrophes join
 * (d'oeste: doeste), any other punctuation separates. `normaliseName("Pingo-d'Água")` and
 * `normaliseName("PINGO D'ÁGUA")` are both `"pingo dagua"`; `normaliseName('ZÉ "DO POVO"')` is `"ze do povo"`.
 */
export function normaliseName(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .replace(APOSTROPHES, '')
    .replace(SEPARATORS, ' ')
    .trim()
    .toLowerCase();
}

/**
 * What two spellings of one municipality's name share: its normalised letters and digits, without spaces
 * ("D'OESTE" and "DO OESTE" stay different; "Embu-Guaçu" and "EMBU GUAÇU" are the same).
 */
export function municipalityKey(name: string): string {
  return normaliseName(name).replace(/ /g, '');
}

/** The candidacy's searchable text: the civil name and, when it says something more, the ballot name. */
export function searchableName(civilName: string, ballotName: string): string {
  const civil = normaliseName(civilName);
  const ballot = normaliseName(ballotName);
  return civil.includes(ballot) ? civil : `${civil} ${ballot}`;
}
