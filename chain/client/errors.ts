// The mail program's custom error codes (chain/protocol/schema.ts, docs/protocol.md
// "Error codes") and a parser that recovers them from whatever web3.js hands back.
import { ERRORS, type ErrorName } from '../protocol/schema.ts';

/** Error name → code, from the schema. */
export const MAIL_ERRORS = Object.fromEntries(Object.entries(ERRORS).map(([name, e]) => [name, e.code])) as {
  readonly [K in ErrorName]: (typeof ERRORS)[K]['code'];
};

export type MailErrorName = ErrorName;

const NAMES = Object.fromEntries(Object.entries(MAIL_ERRORS).map(([n, c]) => [c, n])) as Record<
  number,
  MailErrorName
>;

export function mailErrorName(code: number): MailErrorName | undefined {
  return NAMES[code];
}

export interface MailProgramError {
  code: number;
  name: MailErrorName;
  /** Index of the failing instruction in its transaction, when known. */
  instructionIndex?: number;
}

const LOG_RE = /Program (\w+) failed: custom program error: 0x([0-9a-fA-F]+)/;
const MSG_RE = /custom program error: 0x([0-9a-fA-F]+)/;
// sendAndConfirmTransaction puts the JSON status into its message.
const STATUS_RE = /"InstructionError":\[(\d+),\{"Custom":(\d+)\}\]/;

function fromCode(code: number, instructionIndex?: number): MailProgramError | null {
  const name = NAMES[code];
  if (!name) return null;
  return instructionIndex === undefined ? { code, name } : { code, name, instructionIndex };
}

function fromMessage(message: string): MailProgramError | null {
  const m = MSG_RE.exec(message);
  if (m) return fromCode(Number.parseInt(m[1] as string, 16));
  const s = STATUS_RE.exec(message);
  return s ? fromCode(Number(s[2]), Number(s[1])) : null;
}

function fromLogs(logs: readonly string[], programId?: string): MailProgramError | null {
  for (const line of logs) {
    const m = LOG_RE.exec(line);
    if (m && (!programId || m[1] === programId)) return fromCode(Number.parseInt(m[2] as string, 16));
  }
  return null;
}

/** Programs whose custom errors are never the mail program's (System, Compute Budget, SPL Token, ATA). */
const BUILTIN_PROGRAMS = new Set([
  '11111111111111111111111111111111',
  'ComputeBudget111111111111111111111111111111',
  'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA',
  'ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL',
]);

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** `{InstructionError: [i, {Custom: n}]}` as found in statuses and simulation results. */
function fromTransactionError(err: unknown): MailProgramError | null {
  if (!isRecord(err)) return null;
  const ie = err.InstructionError;
  if (!Array.isArray(ie) || ie.length !== 2) return null;
  const [index, detail] = ie as [unknown, unknown];
  if (!isRecord(detail) || typeof detail.Custom !== 'number') return null;
  return fromCode(detail.Custom, typeof index === 'number' ? index : undefined);
}

/**
 * Recovers the mail program's `{code, name}` from a web3.js SendTransactionError
 * (its logs or message), a simulation response or its `value`, a status `err`,
 * a bare `{InstructionError: [i, {Custom: n}]}`, or a log array. Pass
 * `programId` to ignore custom errors logged by other programs; a bare
 * InstructionError cannot tell programs apart and is taken as ours.
 * Returns null when no mail-program error is found.
 */
export function parseMailProgramError(err: unknown, programId?: string): MailProgramError | null {
  if (Array.isArray(err) && err.every((l) => typeof l === 'string')) return fromLogs(err, programId);
  if (!isRecord(err)) {
    return typeof err === 'string' ? fromMessage(err) : null;
  }
  // Logs say which program failed: a custom error of another program (the
  // System program's "insufficient lamports" is custom error 1) is not ours.
  const ownLogs = Array.isArray(err.logs)
    ? err.logs
    : Array.isArray(err.transactionLogs)
      ? err.transactionLogs
      : null;
  const failed = ownLogs
    ?.map((l) => (typeof l === 'string' ? LOG_RE.exec(l) : null))
    .find((m): m is RegExpExecArray => m !== null);
  if (failed) {
    const ours = programId ? failed[1] === programId : !BUILTIN_PROGRAMS.has(failed[1] as string);
    return ours ? fromCode(Number.parseInt(failed[2] as string, 16)) : null;
  }
  const direct = fromTransactionError(err);
  if (direct) return direct;
  // Simulation response ({value: {err, logs}}), its value, or a status ({err}).
  for (const inner of [err.value, err.transactionError, err.err]) {
    if (inner !== undefined && inner !== err) {
      const found = parseMailProgramError(inner, programId);
      if (found) return found;
    }
  }
  const logs = Array.isArray(err.logs)
    ? err.logs
    : Array.isArray(err.transactionLogs)
      ? err.transactionLogs
      : null;
  if (logs) {
    const found = fromLogs(logs as string[], programId);
    if (found) return found;
  }
  return typeof err.message === 'string' ? fromMessage(err.message) : null;
}
