/**
 * Opting out in the words people use (issue 42, section 3): the phrase list both the server and the
 * stateful mock read replies with (packages/rules/src/opt-out-phrases.ts). Lei 9.504/1997 art. 57-G gives the sender 48
 * hours to remove a person who asked; LGPD art. 8 §5º lets them withdraw consent at any time.
 */
import { describe, expect, it } from 'vitest';
import { normalisedReply, optOutPhraseOf } from '@palanque/rules/opt-out-phrases';
import { optOutKeywordOf, optOutReadingOf } from '../src/messaging/opt-outs.js';

/** Requests to stop, as voters wrote them to campaigns. */
const OPT_OUTS = [
  'não quero mais receber',
  'Não quero mais receber!',
  'nao quero receber mais',
  'NÃO QUERO MAIS RECEBER MENSAGENS',
  'não quero mais receber essas mensagens, obrigado',
  'Não desejo mais receber mensagens',
  'n quero mais receber',
  'não gostaria de receber mais mensagens de vocês',
  'Não quero mais',
  'não quero mais isso',
  'não quero mais essas mensagens',
  'SAIR por favor',
  'sair, por favor!',
  'Por favor, SAIR',
  'quero sair',
  'Parem!!!',
  'PARE por favor',
  'stop please',
  'Cancelar',
  'cancela',
  'Chega!',
  'me tira dessa lista',
  'Me tira dessa lista por favor',
  'me tirem desta lista',
  'tire meu número',
  'tira meu numero daí',
  'remover meu número',
  'Remova meu número da sua lista',
  'exclua meu contato',
  'apaguem meu cadastro',
  'me remove daqui',
  'me exclui da lista',
  'pare de mandar',
  'para de me mandar mensagem',
  'PAREM DE ENVIAR SMS',
  'pode parar de me enviar essas mensagens',
  'para de me encher',
  'não me mande mais',
  'não me mande mais mensagens',
  'nao mandem mais nada',
  'Não me envie mais SMS',
  'não me mandem mensagem',
  'quero ser removido da lista',
  'quero ser excluída',
  'quero sair da lista',
  'como faço para sair dessa lista?',
  'me descadastra',
  'quero me descadastrar',
  'descadastre meu número por favor',
  'chega de mensagem',
  'basta de propaganda',
  'cancelar inscrição',
  'cancela meu cadastro',
  'não tenho interesse em receber',
  'sem interesse nessas mensagens',
  'STOP sending me messages',
  'unsubscribe me',
  'Please remove me from this list',
  "don't text me again",
  'Ｎão quero mais receber', // a fullwidth letter, as some keyboards type
  'não\u200b quero mais receber', // an invisible character between the words
  'Não quero mais receber 🙏',
];

/** Ordinary answers that merely contain the words. */
const ANSWERS = [
  'não vou sair de casa',
  'Não vou sair de casa hoje, chove muito',
  'quero parar no comitê',
  'quero parar no comitê amanhã, onde fica?',
  'pode mandar mais informações',
  'pode me mandar mais informações sobre a proposta?',
  'manda mais, adorei',
  'quero receber mais notícias da campanha',
  'quero receber o plano de governo',
  'não quero mais buraco na minha rua',
  'não quero mais esperar pelo posto de saúde',
  'não quero mais receber visitas de político que some depois da eleição',
  'não para de chover aqui',
  'o ônibus não para no meu bairro',
  'a obra vai parar quando?',
  'vou sair para votar cedo',
  'saio do trabalho às 18h',
  'me tira uma dúvida: onde voto?',
  'posso tirar foto com a candidata?',
  'vou remover o entulho da calçada',
  'cancelaram a reunião do bairro?',
  'o comício foi cancelado?',
  'não recebi o panfleto',
  'recebi sim, obrigado',
  'obrigado pela mensagem',
  'Conta comigo!',
  'parabéns pela proposta',
  'para quando é o debate?',
  'para mim tanto faz',
  'qual o número do candidato?',
  'meu número mudou, anota o novo',
  'quero meu nome na lista de apoiadores',
  'quero entrar no grupo',
  'Sim',
  'ok',
  'quem é?',
  'não mande o carro de som na minha rua de madrugada', 
  'chega de buraco na rua',
  'stop the violence',
  'pare o carro de som na praça',
  'não tenho interesse em política, mas gostei',
  'sem interesse em ir ao comício',
  'como faço para participar da campanha?',
  'eu não quero mais corrupção',
  'quero sair candidato ano que vem',
  'não deixe de mandar o horário do comício',
  'me manda o endereço do comitê',
  'vou parar de trabalhar mais cedo para ir',
];

describe('free Portuguese text is read into opt-outs (LGPD art. 8 §5º; Lei 9.504 art. 57-G)', () => {
  it.each(OPT_OUTS)('"%s" opts out', (reply) => {
    expect(optOutPhraseOf(reply)).toBeDefined();
    expect(optOutReadingOf(reply)).toBeDefined();
  });

  it.each(ANSWERS)('"%s" does not', (reply) => {
    expect(optOutPhraseOf(reply)).toBeUndefined();
    expect(optOutReadingOf(reply)).toBeUndefined();
  });

  it('the lists are long enough to mean something', () => {
    expect(OPT_OUTS.length).toBeGreaterThanOrEqual(40);
    expect(ANSWERS.length).toBeGreaterThanOrEqual(40);
  });

  it('normalises as the keywords are: accents, case, punctuation, fullwidth letters and invisible characters', () => {
    expect(normalisedReply('  NÃO  quero, MAIS receber!!! ')).toBe('nao quero mais receber');
    expect(normalisedReply('Ｓａｉｒ')).toBe('sair');
    expect(normalisedReply('me\u200btira')).toBe('metira');
  });

  it('a lone keyword is still read as its keyword; a phrase has none', () => {
    expect(optOutKeywordOf('Sair.')).toBe('SAIR');
    expect(optOutReadingOf('Sair.')).toEqual({ keyword: 'SAIR', phrase: null });
    expect(optOutReadingOf('me tira dessa lista')).toEqual({ keyword: null, phrase: 'remove_me' });
  });
});
