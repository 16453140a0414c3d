// The outbound side of a submission: one job on QUEUE_OUTBOUND per group of
// remote recipients that asked for the same DSN NOTIFY and ORCPT (usually one group),
// each with its own DKIM-signed copy in the content-addressed blob store.
// Copies differ in their Received id, so every job owns its blob: the
// spooler deletes a job's blob when that job is done.
import type { FlowJob } from 'bullmq';
import { type OutboundJobData, QUEUE_OUTBOUND } from '../../contracts/inbound-jobs.ts';
import type { BlobStore } from '../../core/blobs/blob-store.ts';
import type { Logger } from '../../core/log.ts';
import type { DkimSigner } from '../../mail/dkim-sign.ts';
import { SubmitError } from './submit-error.ts';

export type DsnNotify = NonNullable<NonNullable<OutboundJobData['dsn']>['notify']>;

/** What a submission asked for (RFC 3461): per message ENVID and RET, per recipient NOTIFY and ORCPT. */
export interface DsnRequest {
  envid?: string;
  ret?: 'FULL' | 'HDRS';
  notify?: Record<string, DsnNotify>;
  /** `addr-type;address`, decoded. */
  orcpt?: Record<string, string>;
}

export interface OutboundCopyDeps {
  blobs: BlobStore;
  dkim: Pick<DkimSigner, 'sign'>;
  logger?: Logger;
}

export interface OutboundRequest {
  msgid: string;
  envelopeFrom: string;
  remote: string[];
  /** Domain of the header From: the DKIM key is chosen by it. */
  fromDomain: string;
  /** The message with its trace fields for a given job id. */
  messageFor(id: string): Buffer;
  createdAt: number;
  dsn?: DsnRequest;
}

/** Signs and stores the copies; returns the jobs to queue and the blobs written (to delete on failure). */
export async function prepareOutbound(
  deps: OutboundCopyDeps,
  req: OutboundRequest,
): Promise<{ jobs: FlowJob[]; blobKeys: string[] }> {
  const jobs: FlowJob[] = [];
  const blobKeys: string[] = [];
  try {
    for (const [i, group] of groupByDsn(req.remote, req.dsn).entries()) {
      // The spooler keys its per-domain jobs on msgid, so each group needs its own.
      const id = i === 0 ? req.msgid : `${req.msgid}-${i + 1}`;
      const key = await signAndStore(deps, req.messageFor(id), req.fromDomain, id);
      blobKeys.push(key);
      const dsn: OutboundJobData['dsn'] = {
        ...(group.notify ? { notify: group.notify } : {}),
        ...(req.dsn?.envid ? { envid: req.dsn.envid } : {}),
        ...(req.dsn?.ret ? { ret: req.dsn.ret } : {}),
        ...(group.orcpt ? { orcpt: group.orcpt } : {}),
      };
      const data: OutboundJobData = {
        msgid: id,
        from: req.envelopeFrom,
        to: group.to,
        blobKey: key,
        kind: 'submission',
        createdAt: req.createdAt,
        ...(Object.keys(dsn).length > 0 ? { dsn } : {}),
      };
      jobs.push({
        name: 'submission',
        queueName: QUEUE_OUTBOUND,
        data,
        opts: { jobId: id, removeOnComplete: 1000, removeOnFail: 5000 },
      });
    }
  } catch (err) {
    await removeBlobs(deps.blobs, blobKeys);
    throw err;
  }
  return { jobs, blobKeys };
}

export async function removeBlobs(blobs: BlobStore, keys: string[]): Promise<void> {
  for (const key of keys) await blobs.delete(key).catch(() => {});
}

async function signAndStore(
  deps: OutboundCopyDeps,
  message: Buffer,
  fromDomain: string,
  id: string,
): Promise<string> {
  let signed: Buffer;
  try {
    signed = await deps.dkim.sign(message, fromDomain);
  } catch (err) {
    deps.logger?.error({ msgid: id, err: (err as Error).message }, 'DKIM signing failed');
    throw new SubmitError('unavailable', 'Local error in processing, try again later');
  }
  try {
    return (await deps.blobs.putContent(signed)).key;
  } catch {
    throw new SubmitError('unavailable', 'Insufficient system storage, try again later');
  }
}

interface DsnGroup {
  notify?: DsnNotify;
  orcpt?: string;
  to: string[];
}

/**
 * Remote recipients grouped by their NOTIFY and ORCPT, first-seen order
 * (absent values form their own group): the spooler's SMTP client sends
 * one NOTIFY and one ORCPT for all recipients of a transaction.
 */
function groupByDsn(to: string[], dsn: DsnRequest | undefined): DsnGroup[] {
  const groups = new Map<string, DsnGroup>();
  for (const address of to) {
    const notify = dsn?.notify?.[address];
    const orcpt = dsn?.orcpt?.[address];
    const key = JSON.stringify([notify ?? null, orcpt ?? null]);
    let group = groups.get(key);
    if (!group) {
      group = {
        ...(notify === undefined ? {} : { notify }),
        ...(orcpt === undefined ? {} : { orcpt }),
        to: [],
      };
      groups.set(key, group);
    }
    group.to.push(address);
  }
  return [...groups.values()];
}
