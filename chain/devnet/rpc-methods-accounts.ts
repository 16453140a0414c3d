// Account RPC methods: getAccountInfo, getMultipleAccounts, getProgramAccounts
// (memcmp / dataSize filters), getBalance, requestAirdrop.

import type { AccountState } from './account-store.ts';
import { U64_MAX } from './constants.ts';
import { type RpcContext, type RpcMethod, withContext } from './rpc-context.ts';
import { accountViewParam, encodeAccount } from './rpc-encode.ts';
import { invalidParams, RpcCode, RpcError, rpcInvalid } from './rpc-errors.ts';
import { filterProgramAccount, parseFilters } from './rpc-filters.ts';
import {
  type Config,
  checkMinContextSlot,
  commitmentParam,
  configParam,
  optionalBool,
  param,
  pubkeyParam,
} from './rpc-params.ts';
import { transactionErrorMessage } from './tx-error.ts';

const MAX_MULTIPLE_ACCOUNTS = 100;

function lamportsParam(value: unknown): bigint {
  if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
    throw invalidParams('lamports: expected a positive integer');
  }
  const lamports = BigInt(value);
  if (lamports > U64_MAX) throw invalidParams('lamports: exceeds u64');
  return lamports;
}

function stateSlot(config: Config, slot: number): number {
  commitmentParam(config);
  checkMinContextSlot(config, slot);
  return slot;
}

/**
 * Where an account read looks: the state at the commitment's slot in
 * commitment-true fidelity mode, else the newest state (context: the open slot).
 */
function readView(
  config: Config,
  ctx: RpcContext,
): { slot: number; get: (a: string) => AccountState | null } {
  const { bank } = ctx;
  if (!ctx.fidelity?.commitmentTrue) {
    return { slot: stateSlot(config, bank.slot), get: (a) => bank.getAccount(a) };
  }
  const slot = bank.slotAt(commitmentParam(config));
  checkMinContextSlot(config, slot);
  return { slot, get: (a) => bank.accountAt(a, slot) };
}

export const accountMethods: Record<string, RpcMethod> = {
  getAccountInfo: (params, ctx) => {
    const address = pubkeyParam(param(params, 0, 'pubkey'));
    const config = configParam(params, 1);
    const view = accountViewParam(config);
    const read = readView(config, ctx);
    const state = read.get(address);
    return withContext(read.slot, state ? encodeAccount(state, view) : null);
  },
  getMultipleAccounts: (params, ctx) => {
    const raw = param(params, 0, 'pubkeys');
    if (!Array.isArray(raw)) throw invalidParams('pubkeys: expected an array');
    if (raw.length > MAX_MULTIPLE_ACCOUNTS) {
      throw rpcInvalid(`Too many inputs provided; max ${MAX_MULTIPLE_ACCOUNTS}`);
    }
    const addresses = raw.map((a) => pubkeyParam(a));
    const config = configParam(params, 1);
    const view = accountViewParam(config);
    const read = readView(config, ctx);
    const values = addresses.map((a) => {
      const state = read.get(a);
      return state ? encodeAccount(state, view) : null;
    });
    return withContext(read.slot, values);
  },
  getProgramAccounts: (params, ctx) => {
    const { bank } = ctx;
    const owner = pubkeyParam(param(params, 0, 'program id'), 'program id');
    const config = configParam(params, 1);
    const view = accountViewParam(config);
    const filters = parseFilters(config.filters);
    const commitmentTrue = ctx.fidelity?.commitmentTrue === true;
    const slot = commitmentTrue ? readView(config, ctx).slot : stateSlot(config, bank.slot);
    const accounts = commitmentTrue ? bank.accountsOwnedByAt(owner, slot) : bank.accountsOwnedBy(owner);
    const out: { pubkey: string; account: ReturnType<typeof encodeAccount> }[] = [];
    for (const [pubkey, state] of accounts) {
      if (filterProgramAccount(state, filters)) out.push({ pubkey, account: encodeAccount(state, view) });
    }
    return optionalBool(config, 'withContext') ? withContext(slot, out) : out;
  },
  getBalance: (params, ctx) => {
    const address = pubkeyParam(param(params, 0, 'pubkey'));
    const config = configParam(params, 1);
    const read = readView(config, ctx);
    return withContext(read.slot, read.get(address)?.lamports ?? 0n);
  },
  requestAirdrop: (params, { bank, logger }) => {
    const address = pubkeyParam(param(params, 0, 'pubkey'));
    const lamports = lamportsParam(param(params, 1, 'lamports'));
    configParam(params, 2);
    if (address === bank.faucetAddress) throw invalidParams('cannot airdrop to the faucet itself');
    const outcome = bank.requestAirdrop(address, lamports);
    if (outcome.err !== null) {
      logger.debug({ address, lamports: String(lamports), err: outcome.err }, 'airdrop failed');
      throw new RpcError(
        RpcCode.Internal,
        `airdrop request failed: ${transactionErrorMessage(outcome.err)}`,
        {
          err: outcome.err,
          logs: outcome.execution?.logs ?? [],
        },
      );
    }
    return outcome.signature;
  },
};
