// The server's mail view for the webmail in server mode (docs/webmail.md):
// the token wallet's own folders and message rows, the sealed bytes of one
// copy (the page opens them — the server holds only ciphertext, which is
// also how no_ipfs mail is read), flags, and "compose through the server",
// which hands the page-built RFC 5322 message to the submission path; the
// reader's actions — move (a Junk verdict trains rspamd from the plaintext
// the page sends along), expunge, and drafts stored like IMAP APPEND does.
// Every change goes through the same store operations IMAP uses, so IDLE
// sessions hear of it (src/core/store/mail-events.ts).
// A route plugin: `sealpost serve` passes `mailRoutes(deps)` to the API.
import bs58 from 'bs58';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { BlobStore } from '../../../core/blobs/blob-store.ts';
import { createConnection } from '../../../core/chain-rpc.ts';
import type { Config } from '../../../core/config/types.ts';
import { FolderError, FoldersRepo, specialUseOf } from '../../../core/store/folders-repo.ts';
import { INBOX, type Mailbox, MessagesRepo, type StoredMessage } from '../../../core/store/messages-repo.ts';
import type { Store } from '../../../core/store/open-store.ts';
import type { Database } from '../../../core/store/types.ts';
import { ChainView } from '../../../mail/chain-view.ts';
import { readerPublicKeys } from '../../../mail/reader-keys/reader-keys.ts';
import { sealMessage, walletEncryptionPublicKey, wrapContentKey } from '../../../mail/seal/index.ts';
import { spamLearnerFromConfig } from '../../../mail/spam/from-config.ts';
import { type LearnKind, learnKindOf, type SpamLearner } from '../../../mail/spam/learn.ts';
import { createCopyReleaser } from '../../imap/mail/release.ts';
import { type ServeParts, submitDepsFromConfig } from '../../submission/from-config.ts';
import { type SubmitInput, type SubmitResult, submitMessage } from '../../submission/submit.ts';
import { SubmitError, type SubmitErrorCode } from '../../submission/submit-error.ts';
import { ApiError } from '../errors.ts';

export interface MailRouteDeps {
  db: Kysely<Database>;
  messages: MessagesRepo;
  blobs: BlobStore;
  /** `[smtp] local_domains`: the first gives the wallet's address form. */
  localDomains: string[];
  /** `[smtp] max_message_bytes`: the largest raw message POST /v1/mail/send takes. */
  maxMessageBytes: number;
  /** The submission hand-off (`submitMessage` bound to its deps); absent: sending answers 503. */
  submit?: (input: SubmitInput) => Promise<SubmitResult>;
  /** Trains rspamd from moves into and out of Junk, as IMAP MOVE does; absent: no training. */
  learner?: Pick<SpamLearner, 'submit'>;
  /** Expunged copies, for releasing the operator pin / closing the Email account (as IMAP EXPUNGE). */
  releaseCopies?: (rows: StoredMessage[]) => Promise<void>;
  /** The X25519 key a draft is sealed to (the MailboxKey, else the wallet key); default the wallet key. */
  sealKeyOf?: (wallet: string) => Promise<Uint8Array>;
  /** The account's IMAP/POP reader keys a draft is wrapped for, so mail clients see it too. */
  readerKeys?: (wallet: string) => Promise<{ readerId: string; publicKey: Uint8Array }[]>;
}

/** Folders a move may name before they exist: the default set, made on first use, and Archive. */
const ON_DEMAND_FOLDERS = [INBOX, 'Sent', 'Drafts', 'Trash', 'Junk', 'Archive'];
const DRAFTS = 'Drafts';
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

function base64Bytes(text: string, field: string): Buffer {
  if (!BASE64_RE.test(text) || text.length % 4 !== 0) {
    throw new ApiError(400, 'invalid_request', `body.${field} must be base64`);
  }
  return Buffer.from(text, 'base64');
}

const PAGE = 50;
const FLAG_RE = /^\\?[A-Za-z0-9$_.-]{1,64}$/;

const MESSAGE_ROW = {
  type: 'object',
  required: ['id', 'uid', 'received_at', 'size', 'cid', 'email_address', 'flags'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    uid: { type: 'integer' },
    received_at: { type: 'integer', description: 'unix milliseconds' },
    size: { type: 'integer', description: 'bytes of the sealed object' },
    cid: { type: ['string', 'null'], description: 'CIDv1, or the b3: marker of local-only (no_ipfs) mail' },
    email_address: { type: ['string', 'null'], description: 'the Email account on chain' },
    flags: { type: 'array', items: { type: 'string' } },
  },
} as const;

const ID_PARAMS = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: { id: { type: 'string', minLength: 1, maxLength: 100 } },
} as const;

function row(m: StoredMessage) {
  return {
    id: m.id,
    uid: m.uid,
    received_at: m.receivedAt,
    size: m.size,
    cid: m.cid,
    email_address: m.emailAddress,
    flags: m.flags,
  };
}

const SUBMIT_STATUS: Record<SubmitErrorCode, number> = {
  sender_not_owned: 403,
  rate_limited: 429,
  too_big: 413,
  no_recipients: 400,
  bad_recipient: 400,
  postage_required: 402,
  bad_message: 400,
  spam: 422,
  spam_deferred: 503,
  unavailable: 503,
};

/** SubmitError → the API's error body; the code is kept as is. */
export function submitErrorToApi(err: SubmitError): ApiError {
  const headers: Record<string, string> = {};
  if (err.code === 'rate_limited' && err.detail.retryAfterSecs !== undefined) {
    headers['retry-after'] = String(err.detail.retryAfterSecs);
  }
  return new ApiError(SUBMIT_STATUS[err.code], err.code, err.message, headers);
}

/** The 402 body: the API's error body plus every recipient held for postage. */
export function postageBody(err: SubmitError): {
  error: string;
  message: string;
  recipients: { address: string; wallet: string; required_postage: string }[];
} {
  return {
    error: err.code,
    message: err.message,
    recipients: (err.detail.postage ?? []).map((h) => ({
      address: h.address,
      wallet: h.wallet,
      required_postage: h.requiredPostage.toString(),
    })),
  };
}

const POSTAGE_BODY = {
  type: 'object',
  required: ['error', 'message', 'recipients'],
  additionalProperties: false,
  properties: {
    error: { type: 'string', enum: ['postage_required'] },
    message: { type: 'string' },
    recipients: {
      type: 'array',
      description:
        'every recipient held for postage; the message went to none of the recipients (send again without these to reach the rest)',
      items: {
        type: 'object',
        required: ['address', 'wallet', 'required_postage'],
        additionalProperties: false,
        properties: {
          address: { type: 'string', description: 'the recipient as given in to' },
          wallet: { type: 'string', description: 'the wallet it names (base58)' },
          required_postage: {
            type: 'string',
            pattern: '^[0-9]+$',
            description: 'lamports per message the recipient asks of this sender (decimal, u64)',
          },
        },
      },
    },
  },
} as const;

/**
 * The plugin as `sealpost serve` mounts it: rows from the store, sealed
 * bytes from the blob store, and the submission hand-off built from the
 * same parts the submission listeners use. Without `parts` (a process that
 * runs no SMTP side) sending answers 503.
 */
export function mailRoutesFromConfig(
  config: Config,
  store: Store,
  blobs: BlobStore,
  parts?: ServeParts,
): FastifyPluginAsync {
  const submitDeps = parts ? submitDepsFromConfig(config, parts) : null;
  const chain =
    parts?.chain ??
    new ChainView({
      // Without the serve parts (an API-only process) the same disciplined client serve builds.
      connection: createConnection(config.chain.rpc_url, {
        commitment: config.chain.commitment,
        maxRps: config.chain.max_rps,
        maxWaitMs: config.chain.rpc_max_wait_secs * 1000,
      }),
      programId: config.chain.program_id,
    });
  // The same metrics object counts learning as IMAP's (sealpost_spam_learned_total), when it can.
  const metrics = parts?.spamMetrics as
    | (object & { spamLearned?(kind: LearnKind, outcome: string): void })
    | undefined;
  const learnMetrics =
    metrics && typeof metrics.spamLearned === 'function'
      ? { spamLearned: (k: LearnKind, o: string) => metrics.spamLearned?.(k, o) }
      : undefined;
  const releaser = parts ? createCopyReleaser(parts.redis, config.redis.prefix) : null;
  const routes = mailRoutes({
    db: store.db,
    messages: new MessagesRepo(store.db),
    blobs,
    localDomains: config.smtp.local_domains,
    maxMessageBytes: config.smtp.max_message_bytes,
    submit: submitDeps ? (input) => submitMessage(submitDeps, input) : undefined,
    learner: parts ? spamLearnerFromConfig(config.spam, parts.logger, learnMetrics) : undefined,
    releaseCopies: releaser ? (rows) => releaser.release(rows) : undefined,
    sealKeyOf: async (wallet) => {
      const published = await chain.mailboxKey(wallet);
      return published ? published.pubKey.toBytes() : walletEncryptionPublicKey(bs58.decode(wallet));
    },
    readerKeys: readerPublicKeys(store.db),
  });
  return async (app) => {
    if (releaser) app.addHook('onClose', () => releaser.close());
    await routes(app, {});
  };
}

function notFound(): ApiError {
  // The same answer for "no such message" and "someone else's": ids reveal nothing.
  return new ApiError(404, 'message_not_found', 'no such message in your mailboxes');
}

export function mailRoutes(deps: MailRouteDeps): FastifyPluginAsync {
  const folders = new FoldersRepo(deps.db);
  /**
   * The folder a move or draft names (id or name), looked up in `listed` (the
   * wallet's folders, when the caller has them); the default folders and
   * Archive are made on first use.
   */
  const targetFolder = async (wallet: string, name: string, listed?: Mailbox[]): Promise<Mailbox> => {
    const upper = name.toUpperCase() === INBOX ? INBOX : name;
    const find = (boxes: Mailbox[]) =>
      boxes.find((b) => b.id === name) ?? boxes.find((b) => b.name === upper);
    const found = find(listed ?? (await deps.messages.listMailboxes(wallet)));
    if (found) return found;
    const wanted = ON_DEMAND_FOLDERS.find((f) => f === upper);
    if (!wanted) {
      throw new ApiError(400, 'unknown_mailbox', `you have no folder ${JSON.stringify(name)}`);
    }
    await folders.ensureDefaultFolders(wallet);
    if (wanted === 'Archive') {
      await folders.createMailbox(wallet, 'Archive').catch((err: unknown) => {
        if (!(err instanceof FolderError && err.code === 'exists')) throw err;
      });
    }
    const made = find(await deps.messages.listMailboxes(wallet));
    if (!made) throw new ApiError(400, 'unknown_mailbox', `you have no folder ${JSON.stringify(name)}`);
    return made;
  };
  /** Removes copies as IMAP EXPUNGE does, then releases them; a failed release never undoes the removal. */
  const expungeCopies = async (
    m: StoredMessage,
    log: { warn(o: object, msg: string): void },
  ): Promise<StoredMessage[]> => {
    const removed = await folders.expunge(m.wallet, m.mailboxId, [m.id]);
    if (removed.length > 0 && deps.releaseCopies) {
      await deps.releaseCopies(removed).catch((err: Error) => {
        log.warn({ err: err.message, message: m.id }, 'could not queue the release of an expunged copy');
      });
    }
    return removed;
  };
  const ownMessage = async (wallet: string, id: string): Promise<StoredMessage> => {
    const m = await deps.messages.get(id);
    if (!m || m.wallet !== wallet || m.deletedAt !== null) throw notFound();
    return m;
  };
  /** A stored sealed object as it is kept (docs/sealing.md); 404 when its blob is gone. */
  const sendSealed = async (reply: FastifyReply, blobKey: string) => {
    if (!(await deps.blobs.exists(blobKey))) throw notFound();
    const bytes = await deps.blobs.read(blobKey);
    return reply
      .header('content-type', 'application/octet-stream')
      .header('cache-control', 'private, no-store')
      .send(bytes);
  };

  return async (app) => {
    app.get(
      '/v1/mail/mailboxes',
      {
        config: {
          auth: 'jwt',
          doc: {
            summary: "The token wallet's folders on this server, with counts, and its address forms",
            tags: ['mail'],
            errors: [401, 429],
          },
        },
        schema: {
          response: {
            200: {
              type: 'object',
              required: ['addresses', 'mailboxes'],
              additionalProperties: false,
              properties: {
                addresses: { type: 'array', items: { type: 'string' } },
                mailboxes: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['id', 'name', 'messages', 'unseen'],
                    additionalProperties: false,
                    properties: {
                      id: { type: 'string' },
                      name: { type: 'string' },
                      messages: { type: 'integer' },
                      unseen: { type: 'integer' },
                    },
                  },
                },
              },
            },
          },
        },
      },
      async (request) => {
        const wallet = request.wallet;
        const boxes = await deps.messages.listMailboxes(wallet);
        const counts = await deps.db
          .selectFrom('messages')
          .select(['mailbox_id', 'flags'])
          .where('wallet', '=', wallet)
          .where('deleted_at', 'is', null)
          .execute();
        const total = new Map<string, number>();
        const unseen = new Map<string, number>();
        for (const c of counts) {
          total.set(c.mailbox_id, (total.get(c.mailbox_id) ?? 0) + 1);
          if (!(JSON.parse(c.flags) as string[]).includes('\\Seen')) {
            unseen.set(c.mailbox_id, (unseen.get(c.mailbox_id) ?? 0) + 1);
          }
        }
        return {
          addresses: deps.localDomains.map((d) => `${wallet}@${d}`),
          mailboxes: boxes.map((b) => ({
            id: b.id,
            name: b.name,
            messages: total.get(b.id) ?? 0,
            unseen: unseen.get(b.id) ?? 0,
          })),
        };
      },
    );

    app.get(
      '/v1/mail/messages',
      {
        config: {
          auth: 'jwt',
          doc: {
            summary: 'Message rows of one of your folders, newest first, a page at a time',
            description:
              'Pass next_before as before for the next page. Bodies are sealed: fetch them from /sealed and open them with your key. Search runs in the client over opened messages.',
            tags: ['mail'],
            errors: [400, 401, 404, 429],
          },
        },
        schema: {
          querystring: {
            type: 'object',
            required: ['mailbox'],
            additionalProperties: false,
            properties: {
              mailbox: { type: 'string', minLength: 1, maxLength: 100, description: 'folder id or name' },
              before: { type: 'string', pattern: '^[0-9]{1,15}$', description: 'only UIDs below this' },
              limit: {
                type: 'string',
                pattern: '^[0-9]{1,3}$',
                description: `1–${PAGE * 4}, default ${PAGE}`,
              },
            },
          },
          response: {
            200: {
              type: 'object',
              required: ['messages', 'next_before'],
              additionalProperties: false,
              properties: {
                messages: { type: 'array', items: MESSAGE_ROW },
                next_before: { type: ['integer', 'null'] },
              },
            },
          },
        },
      },
      async (request) => {
        const q = request.query as { mailbox: string; before?: string; limit?: string };
        const boxes = await deps.messages.listMailboxes(request.wallet);
        const box = boxes.find((b) => b.id === q.mailbox) ?? boxes.find((b) => b.name === q.mailbox);
        if (!box)
          throw new ApiError(404, 'mailbox_not_found', `you have no folder ${JSON.stringify(q.mailbox)}`);
        const limit = Math.min(Math.max(Number(q.limit ?? PAGE), 1), PAGE * 4);
        let query = deps.db
          .selectFrom('messages')
          .select('id')
          .where('mailbox_id', '=', box.id)
          .where('deleted_at', 'is', null)
          .orderBy('uid', 'desc')
          .limit(limit + 1);
        if (q.before !== undefined) query = query.where('uid', '<', Number(q.before));
        const ids = (await query.execute()).map((r) => r.id);
        const page = ids.slice(0, limit);
        const rows: StoredMessage[] = [];
        for (const id of page) {
          const m = await deps.messages.get(id);
          if (m) rows.push(m);
        }
        const last = rows[rows.length - 1];
        return { messages: rows.map(row), next_before: ids.length > limit && last ? last.uid : null };
      },
    );

    app.get(
      '/v1/mail/messages/:id/sealed',
      {
        config: {
          auth: 'jwt',
          doc: {
            summary: 'The sealed bytes of one of your messages (open them in the client)',
            description: 'Serves no_ipfs (local-only) mail too, which is on no gateway.',
            tags: ['mail'],
            errors: [401, 404, 429],
            responses: {
              200: {
                description: 'the sealed object (docs/sealing.md)',
                contentType: 'application/octet-stream',
                schema: { type: 'string', format: 'binary' },
              },
            },
          },
        },
        schema: { params: ID_PARAMS },
      },
      async (request, reply) => {
        const m = await ownMessage(request.wallet, (request.params as { id: string }).id);
        return sendSealed(reply, m.blobKey);
      },
    );

    app.get(
      '/v1/mail/by-email/:address/sealed',
      {
        config: {
          auth: 'jwt',
          doc: {
            summary: 'The sealed bytes of one of your messages, named by its Email account on chain',
            description:
              'For a client that starts from the chain (`sealpost mailbox read`): a no_ipfs message is on no gateway, and its Email account `cid` is the `b3:` marker of exactly these bytes, which the client checks before opening them. 404 when none of your messages on this server has that Email account.',
            tags: ['mail'],
            errors: [400, 401, 404, 429],
            responses: {
              200: {
                description: 'the sealed object (docs/sealing.md)',
                contentType: 'application/octet-stream',
                schema: { type: 'string', format: 'binary' },
              },
            },
          },
        },
        schema: {
          params: {
            type: 'object',
            required: ['address'],
            additionalProperties: false,
            properties: {
              address: {
                type: 'string',
                pattern: '^[1-9A-HJ-NP-Za-km-z]{32,44}$',
                description: 'the Email account address (base58)',
              },
            },
          },
        },
      },
      async (request, reply) => {
        const { address } = request.params as { address: string };
        // Any live copy will do (a copy into another folder shares the blob); the wallet filter makes it owner-only.
        const found = await deps.db
          .selectFrom('messages')
          .select('id')
          .where('wallet', '=', request.wallet)
          .where('email_address', '=', address)
          .where('deleted_at', 'is', null)
          .orderBy('received_at')
          .limit(1)
          .executeTakeFirst();
        if (!found) throw notFound();
        const m = await ownMessage(request.wallet, found.id);
        return sendSealed(reply, m.blobKey);
      },
    );

    app.patch(
      '/v1/mail/messages/:id',
      {
        config: {
          auth: 'jwt',
          doc: {
            summary: 'Replace the flags of one of your messages (IMAP flags such as \\Seen)',
            tags: ['mail'],
            errors: [400, 401, 404, 415, 429],
          },
        },
        schema: {
          params: ID_PARAMS,
          body: {
            type: 'object',
            required: ['flags'],
            additionalProperties: false,
            properties: {
              flags: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 65 } },
            },
          },
          response: { 200: MESSAGE_ROW },
        },
      },
      async (request) => {
        const { id } = request.params as { id: string };
        const { flags } = request.body as { flags: string[] };
        const bad = flags.find((f) => !FLAG_RE.test(f));
        if (bad !== undefined) {
          throw new ApiError(400, 'invalid_flag', `body.flags: ${JSON.stringify(bad)} is not an IMAP flag`);
        }
        await ownMessage(request.wallet, id);
        await deps.messages.setFlags(id, flags);
        return row(await ownMessage(request.wallet, id));
      },
    );

    // base64 inflates by 4/3; the JSON wrapper and recipient list need a little more.
    const sendBodyLimit = Math.ceil((deps.maxMessageBytes * 4) / 3) + 64 * 1024;

    app.post(
      '/v1/mail/messages/:id/move',
      {
        bodyLimit: sendBodyLimit,
        config: {
          auth: 'jwt',
          doc: {
            summary: 'Move one of your messages to another folder (as IMAP MOVE)',
            description:
              'mailbox is a folder id or name; INBOX, Sent, Drafts, Trash, Junk and Archive are made on first use, any other name must exist (400 unknown_mailbox). A move into Junk, or out of Junk into any folder but Trash, trains the spam filter like an IMAP move: the server cannot read the sealed copy, so the client sends the plaintext it opened as learn_raw; without it nothing is learned. Learning runs after the answer and never fails the move. IMAP IDLE sessions see the move.',
            tags: ['mail'],
            errors: [400, 401, 404, 409, 413, 415, 429],
          },
        },
        schema: {
          params: ID_PARAMS,
          body: {
            type: 'object',
            required: ['mailbox'],
            additionalProperties: false,
            properties: {
              mailbox: { type: 'string', minLength: 1, maxLength: 200, description: 'folder id or name' },
              learn_raw: {
                type: 'string',
                minLength: 1,
                description: 'base64 of the plaintext message, for the spam learner (Junk moves only)',
              },
            },
          },
          response: {
            200: {
              type: 'object',
              required: ['message', 'mailbox', 'learned'],
              additionalProperties: false,
              properties: {
                message: MESSAGE_ROW,
                mailbox: {
                  type: 'object',
                  required: ['id', 'name'],
                  additionalProperties: false,
                  properties: { id: { type: 'string' }, name: { type: 'string' } },
                },
                learned: {
                  type: ['string', 'null'],
                  enum: ['spam', 'ham', null],
                  description: 'what the message was queued to be learned as, or null',
                },
              },
            },
          },
        },
      },
      async (request) => {
        const { id } = request.params as { id: string };
        const body = request.body as { mailbox: string; learn_raw?: string };
        const learnRaw = body.learn_raw === undefined ? null : base64Bytes(body.learn_raw, 'learn_raw');
        const m = await ownMessage(request.wallet, id);
        const boxes = await deps.messages.listMailboxes(request.wallet);
        const to = await targetFolder(request.wallet, body.mailbox, boxes);
        if (to.id === m.mailboxId) {
          throw new ApiError(
            409,
            'already_in_mailbox',
            `the message is already in ${JSON.stringify(to.name)}`,
          );
        }
        const from = boxes.find((b) => b.id === m.mailboxId);
        await folders.moveMessages(request.wallet, [id], to.id);
        // The verdict IMAP's move would learn (src/mail/spam/learn.ts), from the plaintext the client opened.
        const kind = from ? learnKindOf(specialUseOf(from.name), specialUseOf(to.name)) : null;
        let learned: LearnKind | null = null;
        if (kind && learnRaw && deps.learner) {
          const raw = learnRaw;
          deps.learner.submit(kind, [() => Promise.resolve(raw)]);
          learned = kind;
        }
        return {
          message: row(await ownMessage(request.wallet, id)),
          mailbox: { id: to.id, name: to.name },
          learned,
        };
      },
    );

    app.delete(
      '/v1/mail/messages/:id',
      {
        config: {
          auth: 'jwt',
          doc: {
            summary: 'Delete one of your messages for good (as IMAP EXPUNGE)',
            description:
              'The copy is removed from its folder; the operator pin is released and, for mail this server published, its Email account is closed on chain (the same queues IMAP EXPUNGE uses). The webmail moves to Trash first and expunges only from Trash. IMAP IDLE sessions see it.',
            tags: ['mail'],
            errors: [400, 401, 404, 429],
          },
        },
        schema: {
          params: ID_PARAMS,
          response: {
            200: {
              type: 'object',
              required: ['deleted'],
              additionalProperties: false,
              properties: { deleted: { type: 'string' } },
            },
          },
        },
      },
      async (request) => {
        const { id } = request.params as { id: string };
        const m = await ownMessage(request.wallet, id);
        const removed = await expungeCopies(m, request.log);
        if (removed.length === 0) throw notFound();
        return { deleted: id };
      },
    );

    app.post(
      '/v1/mail/drafts',
      {
        bodyLimit: sendBodyLimit,
        config: {
          auth: 'jwt',
          doc: {
            summary: 'Store a draft in your Drafts folder (as IMAP APPEND does)',
            description:
              'raw is the draft as an RFC 5322 message built in the client. It is sealed to your MailboxKey (else your wallet key) and wrapped for your IMAP reader key, as APPEND stores a message, flagged \\Draft and \\Seen. replaces names the draft this one replaces: it is removed once the new one is stored (404 when unknown, 409 when it is not in Drafts). Delete a sent draft with DELETE /v1/mail/messages/{id}.',
            tags: ['mail'],
            errors: [400, 401, 404, 409, 413, 415, 429],
          },
        },
        schema: {
          body: {
            type: 'object',
            required: ['raw'],
            additionalProperties: false,
            properties: {
              raw: { type: 'string', minLength: 1, description: 'base64 of the draft message bytes' },
              replaces: {
                type: 'string',
                minLength: 1,
                maxLength: 100,
                description: 'the id of the draft it replaces',
              },
            },
          },
          response: { 201: MESSAGE_ROW },
        },
      },
      async (request, reply) => {
        const wallet = request.wallet;
        const body = request.body as { raw: string; replaces?: string };
        const raw = base64Bytes(body.raw, 'raw');
        if (raw.length > deps.maxMessageBytes) {
          throw new ApiError(413, 'too_big', `a draft is at most ${deps.maxMessageBytes} bytes`);
        }
        const account = await deps.db
          .selectFrom('accounts')
          .select('wallet')
          .where('wallet', '=', wallet)
          .executeTakeFirst();
        // Folders belong to an account row.
        if (!account) throw new ApiError(409, 'account_missing', 'create your account before saving drafts');
        const box = await targetFolder(wallet, DRAFTS);
        const old = body.replaces === undefined ? null : await ownMessage(wallet, body.replaces);
        if (old && old.mailboxId !== box.id) {
          throw new ApiError(409, 'not_a_draft', `message ${old.id} is not in your Drafts folder`);
        }
        const receivedAt = Date.now();
        const sealKey = deps.sealKeyOf
          ? await deps.sealKeyOf(wallet)
          : walletEncryptionPublicKey(bs58.decode(wallet));
        const { sealed, contentKey } = await sealMessage({
          envelope: { version: 1, from: '', to: wallet, receivedAt },
          raw: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength),
          recipientPublicKey: sealKey,
        });
        const wraps: { readerId: string; wrap: string }[] = [];
        try {
          for (const r of deps.readerKeys ? await deps.readerKeys(wallet) : []) {
            const wrap = await wrapContentKey(contentKey, r.publicKey);
            wraps.push({ readerId: r.readerId, wrap: Buffer.from(wrap).toString('base64') });
          }
        } finally {
          contentKey.fill(0);
        }
        const stored = await deps.blobs.putContent(sealed);
        const message = await folders.appendMessage({
          wallet,
          mailboxId: box.id,
          blobKey: stored.key,
          size: stored.size,
          receivedAt,
          flags: ['\\Draft', '\\Seen'],
          wraps,
        });
        if (old) await expungeCopies(old, request.log);
        return reply.code(201).send(row(message));
      },
    );
    app.post(
      '/v1/mail/send',
      {
        bodyLimit: sendBodyLimit,
        config: {
          auth: 'jwt',
          doc: {
            summary: 'Compose through the server: submit a raw RFC 5322 message built in the client',
            description:
              'The envelope sender is the wallet address form (`<wallet>@<first local domain>`, or `from` when it is one of yours); the same sender rules, rate windows, DKIM signing and queuing as SMTP submission. Once queued, a copy is kept in your Sent folder. A 402 names every recipient held for postage and sends to nobody: send again to the others.',
            tags: ['mail'],
            errors: [400, 401, 403, 413, 415, 429, 503],
            responses: {
              402: {
                description:
                  'postage_required: local recipients ask this sender for postage it has no stamp for; nothing was queued',
                schema: POSTAGE_BODY,
              },
              202: {
                description: 'queued',
                schema: {
                  type: 'object',
                  required: ['msgid', 'local', 'remote'],
                  properties: {
                    msgid: { type: 'string' },
                    local: { type: 'integer' },
                    remote: { type: 'integer' },
                  },
                },
              },
            },
          },
        },
        schema: {
          body: {
            type: 'object',
            required: ['raw', 'to'],
            additionalProperties: false,
            properties: {
              raw: { type: 'string', minLength: 1, description: 'base64 of the exact message bytes' },
              to: {
                type: 'array',
                minItems: 1,
                maxItems: 1000,
                items: { type: 'string', minLength: 3, maxLength: 254 },
              },
              from: {
                type: 'string',
                maxLength: 254,
                description: 'envelope sender; default your wallet address form',
              },
            },
          },
        },
      },
      async (request, reply) => {
        if (!deps.submit) {
          throw new ApiError(
            503,
            'submission_unavailable',
            'this server does not accept mail from the webmail',
          );
        }
        const body = request.body as { raw: string; to: string[]; from?: string };
        if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body.raw) || body.raw.length % 4 !== 0) {
          throw new ApiError(400, 'invalid_request', 'body.raw must be base64');
        }
        const raw = Buffer.from(body.raw, 'base64');
        const domain = deps.localDomains[0];
        const envelopeFrom = body.from ?? (domain ? `${request.wallet}@${domain}` : '');
        if (envelopeFrom === '')
          throw new ApiError(503, 'submission_unavailable', 'no local domain is configured');
        try {
          const out = await deps.submit({ wallet: request.wallet, raw, envelopeFrom, recipients: body.to });
          return reply.code(202).send(out);
        } catch (err) {
          if (err instanceof SubmitError && err.code === 'postage_required') {
            return reply.code(402).send(postageBody(err));
          }
          if (err instanceof SubmitError) throw submitErrorToApi(err);
          throw err;
        }
      },
    );
  };
}
