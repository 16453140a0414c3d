import { SendTransactionError } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { MAIL_ERRORS, mailErrorName, parseMailProgramError } from './errors.ts';
import { DEFAULT_PROGRAM_ID } from './program-id.ts';

describe('mail program errors', () => {
  it('numbers the table as protocol.md does', () => {
    const names = Object.keys(MAIL_ERRORS);
    expect(names).toHaveLength(39);
    // 0..20 in order, then each slice's own block: 30 (attestations), 40–52 (alias, then domain
    // marketplace), 60–63 (the postoffice's set-up and who may move whose money).
    names.forEach((n, i) => {
      const code = i < 21 ? i : i === 21 ? 30 : i < 35 ? 40 + (i - 22) : 60 + (i - 35);
      expect(MAIL_ERRORS[n as keyof typeof MAIL_ERRORS]).toBe(code);
      expect(mailErrorName(code)).toBe(n);
    });
    expect(MAIL_ERRORS.AliasLocked).toBe(40);
    expect(MAIL_ERRORS.EscrowNotExpired).toBe(48);
    expect(MAIL_ERRORS.DomainLocked).toBe(49);
    expect(MAIL_ERRORS.DomainPending).toBe(52);
    expect(MAIL_ERRORS.NotDomainAuthority).toBe(30);
    expect(mailErrorName(30)).toBe('NotDomainAuthority');
    expect(MAIL_ERRORS.PostageRequired).toBe(8);
    expect(MAIL_ERRORS.DomainInactive).toBe(17);
    expect(MAIL_ERRORS.LeaseExpired).toBe(19);
    expect(MAIL_ERRORS.TimelockNotElapsed).toBe(20);
    expect(MAIL_ERRORS.NotUpgradeAuthority).toBe(60);
    expect(MAIL_ERRORS.RelayNotAllowed).toBe(61);
    expect(MAIL_ERRORS.StampsNotRelayable).toBe(62);
    expect(MAIL_ERRORS.BountyLocked).toBe(63);
    expect(mailErrorName(99)).toBeUndefined();
  });

  it('reads a status InstructionError', () => {
    expect(parseMailProgramError({ InstructionError: [1, { Custom: 8 }] })).toEqual({
      code: 8,
      name: 'PostageRequired',
      instructionIndex: 1,
    });
    expect(parseMailProgramError({ err: { InstructionError: [0, { Custom: 9 }] } })?.name).toBe(
      'BountyExpired',
    );
    expect(parseMailProgramError({ InstructionError: [0, 'InvalidAccountData'] })).toBeNull();
  });

  it('reads simulation logs, filtering by program', () => {
    const logs = [
      `Program ${DEFAULT_PROGRAM_ID} invoke [1]`,
      'Program log: Instruction: SendMail',
      `Program ${DEFAULT_PROGRAM_ID} failed: custom program error: 0xb`,
    ];
    expect(parseMailProgramError(logs)).toEqual({ code: 11, name: 'FromHashMismatch' });
    expect(parseMailProgramError({ value: { err: null, logs } }, DEFAULT_PROGRAM_ID)?.code).toBe(11);
    expect(parseMailProgramError(logs, '11111111111111111111111111111111')).toBeNull();
  });

  it('reads a SendTransactionError', () => {
    const err = new SendTransactionError({
      action: 'send',
      signature: 'sig',
      transactionMessage:
        'Transaction simulation failed: Error processing Instruction 0: custom program error: 0x11',
      logs: [`Program ${DEFAULT_PROGRAM_ID} failed: custom program error: 0x11`],
    });
    expect(parseMailProgramError(err, DEFAULT_PROGRAM_ID)).toEqual({ code: 17, name: 'DomainInactive' });
    expect(
      parseMailProgramError(
        new Error('Transaction x failed ({"err":{"InstructionError":[2,{"Custom":4}]}})'),
      ),
    ).toEqual({
      code: 4,
      name: 'AlreadyExists',
      instructionIndex: 2,
    });
  });

  it("does not take another program's custom error for the mail program's", () => {
    const system = {
      err: { InstructionError: [0, { Custom: 1 }] },
      logs: [
        'Program 11111111111111111111111111111111 invoke [1]',
        'Transfer: insufficient lamports 995000, need 2000000000',
        'Program 11111111111111111111111111111111 failed: custom program error: 0x1',
      ],
    };
    expect(parseMailProgramError(system)).toBeNull();
    expect(parseMailProgramError(system, DEFAULT_PROGRAM_ID)).toBeNull();
    expect(parseMailProgramError({ value: system }, DEFAULT_PROGRAM_ID)).toBeNull();
    const ours = {
      err: { InstructionError: [1, { Custom: 17 }] },
      logs: [`Program ${DEFAULT_PROGRAM_ID} failed: custom program error: 0x11`],
    };
    expect(parseMailProgramError(ours, DEFAULT_PROGRAM_ID)).toEqual({ code: 17, name: 'DomainInactive' });
  });

  it('returns null for anything else', () => {
    expect(parseMailProgramError(new Error('socket hang up'))).toBeNull();
    expect(parseMailProgramError(null)).toBeNull();
    expect(parseMailProgramError('custom program error: 0x63')).toBeNull();
  });
});
