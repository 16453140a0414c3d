// The files the schema renders into, each with what it holds now and what it
// should hold: the C header (whole file), docs/protocol.md (its generated
// tables only) and the IDL (whole file).
import { fileURLToPath } from 'node:url';
import {
  renderAccountsHeader,
  renderArgsHeader,
  renderDecodeHeader,
  renderDispatchHeader,
  renderHeader,
} from './render-c.ts';
import { rewriteProtocolDocs } from './render-docs.ts';
import { renderIdlJson } from './render-idl.ts';

export interface GeneratedFile {
  /** Path from the repository root. */
  name: string;
  url: URL;
  before: string | null;
  after: string;
  /** What differs, in a few words. */
  detail: string;
  /** Reasons the file cannot be generated (a docs marker the schema has no table for, or a missing one). */
  problems: string[];
}

const ROOT = new URL('../../../', import.meta.url);

export function generatedFiles(read: (path: string) => string | null): GeneratedFile[] {
  const file = (
    name: string,
    render: (before: string | null) => Omit<GeneratedFile, 'name' | 'url' | 'before'>,
  ) => {
    const url = new URL(name, ROOT);
    const before = read(fileURLToPath(url));
    return { name, url, before, ...render(before) };
  };
  const whole = (text: string) => (before: string | null) => ({
    after: text,
    detail: before === null ? 'missing' : 'differs from the schema',
    problems: [],
  });
  return [
    file('chain/program/src/generated/interface.h', whole(renderHeader())),
    file('chain/program/src/generated/accounts.h', whole(renderAccountsHeader())),
    file('chain/program/src/generated/args.h', whole(renderArgsHeader())),
    file('chain/program/src/generated/decode.h', whole(renderDecodeHeader())),
    file('chain/program/src/generated/dispatch.h', whole(renderDispatchHeader())),
    file('chain/protocol/idl.json', whole(renderIdlJson())),
    file('docs/protocol.md', (before) => {
      if (before === null) return { after: '', detail: 'missing', problems: ['docs/protocol.md is missing'] };
      const { text, stale, missing } = rewriteProtocolDocs(before);
      return {
        after: text,
        detail: `tables ${stale.join(', ')}`,
        problems: missing.map((m) => `no <!-- generated: ${m} --> marker for the schema's table`),
      };
    }),
  ];
}
