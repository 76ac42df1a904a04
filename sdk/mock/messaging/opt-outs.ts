/**
 * Opt-outs as the server reads them (src/messaging/opt-outs.ts): a reply that is one keyword, or a
 * request to stop in the sender's own words (opt-out-phrases.ts, the rule both import).
 */
import { optOutPhraseOf } from '@palanque/rules/opt-out-phrases';

/** The opt-out keywords (src/messaging/opt-outs.ts): a footer must name one. */
export const OPT_OUT_KEYWORDS = new Set(['PARAR', 'PARE', 'SAIR', 'CANCELAR', 'DESCADASTRAR', 'STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'OPTOUT']);

/** A reply's text read as the server reads an opt-out (opt-outs.ts): the whole reply one keyword, or a request to stop in the sender's own words (opt-out-phrases.ts). */
export const isOptOut = (body: string) => OPT_OUT_KEYWORDS.has(body.normalize('NFKD').replace(/[^\p{L}\p{N}]/gu, '').toUpperCase()) || optOutPhraseOf(body) !== undefined;
