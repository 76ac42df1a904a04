/**
 * Synthetic content in a campaign (issue 42), one rule shared by the server (src/messaging/campaign-plan.ts)
 * and the stateful mock (mock/messaging/campaign-plan.ts), so both judge a campaign's text the same way.
 *
 * The law: propaganda that uses synthetic multimedia content (image or sound made, replaced, merged or
 * altered by artificial intelligence) must say, explicitly, prominently and accessibly, that the content
 * was made or altered and with which technology (Res. TSE 23.610/2019 art. 9-B, as amended by Res. TSE
 * 23.732/2024); a deepfake, content made or altered to create, replace or change the image or voice of a
 * person, living, dead or fictitious, is banned even with that person's consent (art. 9-C §1º).
 *
 * What holds, for a campaign whose request declares `synthetic_content`:
 * - `deepfake: true` is refused (422 `deepfake_banned`, field `synthetic_content.deepfake`) under every
 *   compliance mode, for every credential: no mode makes a banned content lawful.
 * - Otherwise its message (`mensagem.mensagem`, the footer not counted) carries the label: within its
 *   first LABEL_WITHIN characters (what a phone shows first, the "destacado" of art. 9-B), the words
 *   "conteúdo fabricado", "conteúdo manipulado", "conteúdo alterado" or "conteúdo gerado" and the
 *   technology's name as declared, case and accents ignored (`syntheticLabel` writes one). A message
 *   without it breaks `synthetic_content_label`: a warning under `warn`, a refusal under `enforce`.
 * A campaign that declares nothing is not judged by these rules: Palanque cannot see what a link opens.
 */

/** The declaration a campaign request may carry (`synthetic_content`). */
export interface SyntheticContent {
  /** The technology the content was made or altered with, as the label must name it. */
  technology: string;
  /** True: the content is a deepfake (art. 9-C §1º), which is refused. */
  deepfake?: boolean;
}

/** The label must start within this many characters of the message: its first GSM-7 segment. */
export const LABEL_WITHIN = 160;

/** The phrases that say the content was made or altered (accents and case folded). */
export const LABEL_PHRASES = ['conteudo fabricado', 'conteudo manipulado', 'conteudo alterado', 'conteudo gerado'] as const;

/** The label Palanque suggests: it meets the rule for `technology`. */
export function syntheticLabel(technology: string): string {
  return `Conteúdo fabricado ou manipulado com ${technology.trim()}.`;
}

/** Lower case, accents removed, runs of white space as one space. */
function folded(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ');
}

/** Whether `message` carries the label for `technology` near its start. */
export function hasSyntheticLabel(message: string, technology: string): boolean {
  const head = folded(message.slice(0, LABEL_WITHIN + technology.length + 40));
  const phrase = LABEL_PHRASES.map((words) => head.indexOf(words)).filter((at) => at >= 0 && at < LABEL_WITHIN);
  const named = folded(technology.trim());
  return phrase.length > 0 && named !== '' && head.includes(named);
}

/** A problem the declaration brings, as the error model's detail names it. */
export interface SyntheticContentProblem {
  field: 'synthetic_content.deepfake' | 'mensagem.mensagem';
  rule: 'deepfake_banned' | 'synthetic_content_label';
  message: string;
  value: string | boolean;
}

/** The deepfake refusal, when the declaration says so. */
export function deepfakeProblem(declared: SyntheticContent | undefined): SyntheticContentProblem | undefined {
  if (!declared?.deepfake) return undefined;
  return {
    field: 'synthetic_content.deepfake',
    rule: 'deepfake_banned',
    message: 'a deepfake (content made or altered to create, replace or change the image or voice of a person) is banned in electoral propaganda, even with consent (Res. TSE 23.610/2019 art. 9-C §1º): Palanque sends none',
    value: true,
  };
}

/** The label rule's problem, when a declared campaign's message lacks the label. */
export function labelProblem(declared: SyntheticContent | undefined, message: string): SyntheticContentProblem | undefined {
  if (!declared || declared.deepfake) return undefined;
  if (hasSyntheticLabel(message, declared.technology)) return undefined;
  return {
    field: 'mensagem.mensagem',
    rule: 'synthetic_content_label',
    message: `declares synthetic content made with ${declared.technology.trim()}: its first ${LABEL_WITHIN} characters must say the content was made or altered and name the technology (Res. TSE 23.610/2019 art. 9-B), e.g. "${syntheticLabel(declared.technology)}"`,
    value: declared.technology.trim(),
  };
}
