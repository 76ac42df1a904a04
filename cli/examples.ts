/** Examples in `--help`: each command's own, and a group's help shows the first example of each of its commands. */
import type { Command } from 'commander';

const recorded = new WeakMap<Command, readonly string[]>();

/** Adds text and examples (command lines without the leading `palanque`) after the command's help. */
export function withExamples(command: Command, examples: readonly string[], text = ''): Command {
  recorded.set(command, examples);
  const lines = [text ? `\n${text.replace(/^\n+|\n+$/g, '')}` : ''];
  if (examples.length > 0) lines.push('', 'Examples:', ...examples.map((example) => `  $ palanque ${example}`));
  const help = lines.join('\n');
  if (help.trim()) command.addHelpText('after', `${help}\n`);
  return command;
}

/** A group's help: the first example of each of its commands (computed when the help is shown). */
export function withGroupExamples(group: Command): Command {
  group.addHelpText('after', () => {
    const examples = group.commands.map((command) => recorded.get(command)?.[0]).filter((example): example is string => Boolean(example));
    return examples.length > 0 ? `\nExamples:\n${examples.map((example) => `  $ palanque ${example}`).join('\n')}\n\nEach command has its own --help.` : '';
  });
  return group;
}
