// Chain-level RPC methods: slots, blockhashes, fees, rent, node info.
import { MAX_PERMITTED_DATA_LENGTH, SLOTS_PER_EPOCH } from './constants.ts';
import { messageFee } from './fees.ts';
import { DEVNET_FEATURE_SET, DEVNET_VERSION, type RpcMethod, withContext } from './rpc-context.ts';
import { invalidParams, RpcCode, RpcError, rpcInvalid } from './rpc-errors.ts';
import {
  checkMinContextSlot,
  commitmentParam,
  configParam,
  decodeBase64Strict,
  integer,
  param,
  pubkeyParam,
  stringParam,
} from './rpc-params.ts';
import { type DecodedTransaction, decodeTransaction } from './transaction.ts';

const slotMethod: RpcMethod = (params, { bank }) => {
  const config = configParam(params, 0);
  const slot = bank.slotAt(commitmentParam(config));
  checkMinContextSlot(config, slot);
  return slot;
};

const blockHeightMethod: RpcMethod = (params, { bank }) => {
  const config = configParam(params, 0);
  const commitment = commitmentParam(config);
  checkMinContextSlot(config, bank.slotAt(commitment));
  return bank.blockHeightAt(commitment);
};

/** Agave's MAX_TX_ACCOUNT_LOCKS: getRecentPrioritizationFees takes at most this many accounts. */
const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;

const recentPrioritizationFees: RpcMethod = (params, { fidelity }) => {
  if (!fidelity) return [];
  const raw = params[0];
  if (raw !== undefined && raw !== null && !Array.isArray(raw))
    throw invalidParams('accounts: expected an array');
  const accounts = ((raw as unknown[] | undefined | null) ?? []).map((a) => pubkeyParam(a));
  if (fidelity.agaveLimits && accounts.length > MAX_PRIORITIZATION_FEE_ACCOUNTS) {
    fidelity.noteAgaveRefusal();
    throw rpcInvalid(`Too many inputs provided; max ${MAX_PRIORITIZATION_FEE_ACCOUNTS}`);
  }
  return fidelity.recentPrioritizationFees(accounts) ?? [];
};

function decodeMessage(text: string): DecodedTransaction {
  const bytes = decodeBase64Strict(text);
  if (!bytes) throw rpcInvalid('invalid base64 encoding');
  try {
    // A message alone is a transaction with zero signatures in front.
    return decodeTransaction(new Uint8Array(Buffer.concat([Buffer.from([0]), bytes])));
  } catch (err) {
    throw rpcInvalid(`failed to deserialize message: ${(err as Error).message}`);
  }
}

export const chainMethods: Record<string, RpcMethod> = {
  getSlot: slotMethod,
  getBlockHeight: blockHeightMethod,
  getMaxRetransmitSlot: (_p, { bank }) => bank.slot,
  getMaxShredInsertSlot: (_p, { bank }) => bank.slot,
  getFirstAvailableBlock: () => 0,
  minimumLedgerSlot: () => 0,
  getTransactionCount: (_p, { bank }) => bank.transactionCount,
  getGenesisHash: (_p, { bank }) => bank.genesisHash,
  getVersion: () => ({ 'solana-core': DEVNET_VERSION, 'feature-set': DEVNET_FEATURE_SET }),
  getIdentity: (_p, { bank }) => ({ identity: bank.faucetAddress }),
  getSlotLeader: (_p, { bank }) => bank.faucetAddress,
  getRecentPrioritizationFees: recentPrioritizationFees,
  getRecentPerformanceSamples: () => [],
  getHealth: (_p, { bank }) => {
    if (bank.halted) throw new RpcError(RpcCode.NodeUnhealthy, 'Node is unhealthy', { reason: bank.halted });
    return 'ok';
  },
  getClusterNodes: (_p, { bank, rpcAddress }) => [
    {
      pubkey: bank.faucetAddress,
      gossip: null,
      tpu: null,
      rpc: rpcAddress,
      version: DEVNET_VERSION,
      featureSet: DEVNET_FEATURE_SET,
      shredVersion: 0,
    },
  ],
  getLatestBlockhash: (params, { bank }) => {
    const config = configParam(params, 0);
    const commitment = commitmentParam(config);
    const latest = bank.latestBlockhash(commitment);
    checkMinContextSlot(config, bank.slotAt(commitment));
    return withContext(bank.slotAt(commitment), {
      blockhash: latest.blockhash,
      lastValidBlockHeight: latest.lastValidBlockHeight,
    });
  },
  isBlockhashValid: (params, { bank }) => {
    const blockhash = stringParam(param(params, 0, 'blockhash'), 'blockhash');
    const config = configParam(params, 1);
    return withContext(bank.slotAt(commitmentParam(config)), bank.isBlockhashValid(blockhash));
  },
  getFeeForMessage: (params, { bank }) => {
    const message = decodeMessage(stringParam(param(params, 0, 'message'), 'message'));
    const config = configParam(params, 1);
    const fee = bank.isBlockhashValid(message.recentBlockhash) ? messageFee(message) : null;
    return withContext(bank.slotAt(commitmentParam(config)), fee);
  },
  getMinimumBalanceForRentExemption: (params, { bank }) => {
    const length = integer(param(params, 0, 'data length'), 'data length', 0, MAX_PERMITTED_DATA_LENGTH);
    configParam(params, 1);
    return bank.rentExemptMinimum(length);
  },
  getEpochInfo: (params, { bank }) => {
    const slot = bank.slotAt(commitmentParam(configParam(params, 0)));
    return {
      absoluteSlot: slot,
      blockHeight: bank.heightOf(slot),
      epoch: Math.floor(slot / SLOTS_PER_EPOCH),
      slotIndex: slot % SLOTS_PER_EPOCH,
      slotsInEpoch: SLOTS_PER_EPOCH,
      transactionCount: bank.transactionCount,
    };
  },
  getEpochSchedule: () => ({
    slotsPerEpoch: SLOTS_PER_EPOCH,
    leaderScheduleSlotOffset: SLOTS_PER_EPOCH,
    warmup: false,
    firstNormalEpoch: 0,
    firstNormalSlot: 0,
  }),
  getBlockTime: (params, { bank }) => {
    const slot = integer(param(params, 0, 'slot'), 'slot');
    const info = bank.slotInfo(slot);
    if (!info || slot > bank.slotAt('confirmed')) {
      throw new RpcError(RpcCode.BlockNotAvailable, `Block not available for slot ${slot}`);
    }
    return info.blockTime;
  },
};
