// Shared fixture for the tests of the real mail program: the world of
// chain/program/world.ts (also used by bench:program), plus the assertion on
// a named custom error.
import { expect } from 'vitest';
import { MAIL_ERRORS, type MailErrorName } from '../chain/errors.ts';
import type { RunResult } from '../chain/program/runtime.ts';

export * from '../chain/program/world.ts';

export function expectErr(r: RunResult, name: MailErrorName): void {
  if (r.ok) throw new Error(`expected ${name}, but the transaction succeeded\n${r.logs.join('\n')}`);
  expect({ code: r.err?.customCode, message: r.err?.message }).toMatchObject({ code: MAIL_ERRORS[name] });
}
