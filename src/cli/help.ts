/**
 * The help of every command: commander lists a required option among the optional ones, so
 * `prune --help` hid that `--keep` must be given. The usage line names each required option and
 * its description ends in "(required)".
 */
import { Help, type Command, type HelpConfiguration, type Option } from 'commander';

const plain = new Help();

export const HELP: HelpConfiguration = {
  commandUsage(cmd: Command): string {
    const required = cmd.options.filter((o) => o.mandatory).map((o) => o.flags);
    const usage = plain.commandUsage(cmd);
    if (required.length === 0) return usage;
    // "filings-export prune [options]" → "filings-export prune --keep <n> [options]"
    const name = usage.slice(0, usage.length - cmd.usage().length).trimEnd();
    return `${name} ${required.join(' ')} ${cmd.usage()}`;
  },
  optionDescription(option: Option): string {
    const text = plain.optionDescription(option);
    return option.mandatory ? `${text} (required)` : text;
  },
};
