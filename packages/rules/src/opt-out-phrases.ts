/**
 * Opting out the way people write it (issue 42, section 3), shared by the server (src/messaging/opt-outs.ts)
 * and the stateful msw mock (mock/messaging/opt-outs.ts), so both read the same reply the same way.
 *
 * The law: a person may withdraw consent at any time, by a free and easy procedure (LGPD, Lei
 * 13.709/2018, art. 8 §5º), and propaganda sent electronically must offer a way out, which the sender
 * honours within 48 hours, under a fine per message sent after it (Lei 9.504/1997 art. 57-G, caput and
 * parágrafo único; Res. TSE 23.610/2019 art. 33, caput and §1º, which adds the person may ask for their data to be eliminated). A voter who answers "não quero mais receber" or "me
 * tira dessa lista" asked for exactly that, so such an answer opts them out as the bare keyword does.
 *
 * What holds:
 * - A reply is normalised as the keywords are (opt-outs.ts): compatibility-decomposed, accents and
 *   other marks and invisible format characters removed, then lower-cased; punctuation and symbols
 *   become spaces, runs of spaces one.
 * - It opts out when, once courtesy words are set aside ("por favor", "obrigado", "ok"...), what is
 *   left is one opt-out word ("SAIR por favor", "Parem!!", "stop please"), or when it holds one of the
 *   phrases below, each a request to stop messaging or to remove the number (`OPT_OUT_PHRASES`).
 * - The phrases are requests, never the bare words: "sair", "parar", "mandar", "receber" inside an
 *   ordinary answer ("não vou sair de casa", "quero parar no comitê", "pode mandar mais informações")
 *   do not opt out. A wrong opt-out silences a voter who wants the messages; a missed one stays open to
 *   the team, which can opt the number out by hand (optOutSmsNumber, optOutConversation).
 * Not guaranteed: irony, typos beyond the usual abbreviations (n, nao, q, msg, vcs, pf, pfv), other
 * languages than Portuguese and English. No network model is consulted: the list is the rule.
 */

/** A reply as the phrases read it: no accents or format characters, lower case, punctuation as spaces, one space between words. */
export function normalisedReply(body: string): string {
  return body
    .normalize('NFKD')
    .replace(/[\p{M}\p{Cf}]/gu, '')
    .toLowerCase()
    .replace(/[\p{P}\p{S}\s]+/gu, ' ')
    .trim();
}

/** Words that, alone beside an opt-out word, leave it an opt-out ("SAIR por favor"). */
const COURTESY = new Set([
  'por', 'favor', 'pf', 'pfv', 'pfvr', 'porfavor', 'obrigado', 'obrigada', 'obg', 'brigado', 'brigada', 'grato', 'grata', 'ok', 'okay', 'sim', 'ja', 'agora',
  'please', 'pls', 'plz', 'thanks', 'thank', 'you', 'quero', 'eu', 'me', 'the', 'now', 'de', 'vez', 'uma', 'todo', 'tudo', 'imediatamente',
]);

/** Words that opt out when they are the whole request (the keywords and their spoken forms). */
const OPT_OUT_WORDS = new Set([
  'sair', 'saia', 'saiam', 'parar', 'pare', 'parem', 'para', 'cancelar', 'cancela', 'cancele', 'descadastrar', 'descadastra', 'descadastre', 'descadastro', 'chega', 'basta',
  'stop', 'stopall', 'unsubscribe', 'cancel', 'end', 'quit', 'optout',
]);

// Pieces of the phrases, over the normalised reply (words separated by one space).
const NOT = '(?:nao|n|num)';
const ME = '(?:me |pra mim |para mim )?';
const MESSAGES = '(?:mensage(?:m|ns)|msgs?|sms|torpedos?|propagandas?|spam|isso|nada|mais nada|(?:essas?|suas?|tuas?) (?:mensage(?:m|ns)|msgs?|coisas?|propagandas?)|(?:esses?|seus?) (?:sms|torpedos?|spam))';
const SEND = '(?:mandar|enviar|mandarem|enviarem|mandando|enviando|escrever|escreverem|encher|perturbar|incomodar|importunar)';
const SEND_IMPERATIVE = '(?:mande|mandem|manda|envie|enviem|envia|enviar|mandar|escreva|escrevam)';
const REMOVE = '(?:tira|tire|tirem|tirar|retira|retire|retirem|retirar|remove|remova|removam|remover|exclui|exclua|excluam|excluir|apaga|apague|apaguem|apagar|deleta|delete|deletem|deletar|descadastra|descadastre|descadastrem|descadastrar)';
const MY_NUMBER = '(?:(?:o )?meu (?:numero|contato|telefone|celular|cel|cadastro|zap|whats|whatsapp)|(?:o )?meu nome (?:d|dess|dest)[ae]s? (?:lista|listas|grupo|cadastro))';
const LIST = '(?:(?:d|dess|dest|da su|de su)[ae]s? (?:lista|listas|grupo|cadastro|campanha|contatos)|daqui|disso|do (?:grupo|cadastro|envio|seu cadastro|sistema))';

/** The phrases that opt out, each named for the tests and for what the opt-out records. */
export const OPT_OUT_PHRASES: ReadonlyArray<{ id: string; pattern: RegExp }> = [
  // "não quero mais receber", "não quero receber mais", "não desejo mais receber mensagens"
  { id: 'no_longer_receive', pattern: new RegExp(`\\b${NOT} (?:quero|desejo|gostaria de|quer) (?:mais )?receber(?: mais)?(?: ${MESSAGES})?(?: de (?:voces|vcs|vc|voce))?(?: (?:daqui|por favor|pf|pfv|obrigad[oa]))*$`) },
  { id: 'no_longer_receive', pattern: new RegExp(`\\b${NOT} (?:quero|desejo|gostaria de) (?:mais )?receber(?: mais)? ${MESSAGES}\\b`) },
  // "não quero mais", "não quero mais mensagens", "não quero mais isso"
  { id: 'no_more', pattern: new RegExp(`\\b${NOT} (?:quero|desejo) mais(?: ${MESSAGES})?(?: (?:por favor|pf|pfv|obrigad[oa]))*$`) },
  { id: 'no_more', pattern: new RegExp(`\\b${NOT} (?:quero|desejo) mais ${MESSAGES}\\b`) },
  // "pare de mandar", "para de me mandar mensagem", "parem de enviar sms", "pode parar de mandar"
  { id: 'stop_sending', pattern: new RegExp(`\\b(?:pare|para|parem|parar|parar de vez) de ${ME}${SEND}\\b`) },
  // "quero parar de receber", "como paro de receber isso"
  { id: 'stop_sending', pattern: /\b(?:quero|queria|gostaria de|como|pode|posso) (?:parar|paro|deixar|deixo) de receber\b/ },
  // "não me mande mais", "não mandem mais mensagens", "não me envie nada"
  { id: 'do_not_send', pattern: new RegExp(`\\b${NOT} ${ME}${SEND_IMPERATIVE} (?:mais|${MESSAGES})\\b`) },
  { id: 'do_not_send', pattern: new RegExp(`\\b${NOT} ${ME}${SEND_IMPERATIVE}$`) },
  // "me tira dessa lista", "remover meu número", "exclua meu contato", "me descadastra"
  { id: 'remove_me', pattern: new RegExp(`\\b${REMOVE} ${MY_NUMBER}\\b`) },
  { id: 'remove_me', pattern: new RegExp(`\\b(?:me )?${REMOVE}(?: me)? ${LIST}(?: \\w+)?$`) },
  { id: 'remove_me', pattern: new RegExp(`\\bme ${REMOVE} ${LIST}\\b`) },
  { id: 'remove_me', pattern: new RegExp(`\\b${REMOVE} (?:me|meu numero) (?:${LIST}|da lista)\\b`) },
  { id: 'remove_me', pattern: /\bme descadastr\w*|\bdescadastr\w* me\b|\bquero (?:me )?descadastr\w*|\bdescadastr\w* (?:meu|o meu|este|esse) (?:numero|contato|telefone|celular)\b/ },
  // "quero ser removido", "quero ser excluída da lista"
  { id: 'remove_me', pattern: /\bquero ser (?:removid|excluid|retirad|descadastrad|tirad|apagad)[oa]\b/ },
  // "quero sair da lista", "sair desse grupo", "como faço para sair da lista"
  { id: 'leave_list', pattern: /\bsair (?:(?:d|dess|dest|da su|de su)[ae]s? (?:lista|listas|grupo|cadastro|campanha|contatos)|(?:do|desse|deste|do seu) (?:grupo|cadastro))\b/ },
  // "chega de mensagem", "basta de sms"
  { id: 'enough', pattern: new RegExp(`\\b(?:chega|basta) de ${MESSAGES}\\b`) },
  // "cancelar inscrição", "cancela meu cadastro", "cancelar o recebimento"
  { id: 'cancel_subscription', pattern: /\bcancel\w* (?:a |minha |o |meu )?(?:inscricao|cadastro|recebimento|assinatura|envio|envios)\b/ },
  // "não tenho interesse em receber", "sem interesse nessas mensagens"
  { id: 'not_interested', pattern: new RegExp(`\\b(?:${NOT} tenho|sem) interesse (?:em receber|n[ae]ss[ae]s? (?:mensage(?:m|ns)|msgs?|sms|propagandas?))\\b`) },
  // English: "stop sending", "unsubscribe me", "remove me from this list", "do not text me"
  { id: 'english', pattern: /\b(?:stop (?:sending|texting|messaging)|unsubscribe|opt me out|remove me|take me off|(?:do not|dont|don t) (?:text|message|send|contact) me)\b/ },
];

/**
 * The id of the phrase a reply opts out with (`word` for an opt-out word among courtesy words), or
 * undefined when it is an ordinary answer.
 */
export function optOutPhraseOf(body: string): string | undefined {
  const text = normalisedReply(body);
  if (text === '') return undefined;
  const words = text.split(' ');
  const left = words.filter((word) => !COURTESY.has(word));
  // One opt-out word, maybe repeated ("PARAR PARAR"), among courtesy words.
  if (left.length > 0 && new Set(left).size === 1 && OPT_OUT_WORDS.has(left[0]!) && words.length <= 6) return 'word';
  return OPT_OUT_PHRASES.find(({ pattern }) => pattern.test(text))?.id;
}
