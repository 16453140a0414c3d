// [limits]: the cost guard's chain-publication windows (src/core/limits/). Each
// window is a token bucket: `<name>_messages` publications at once, refilled
// at that many per `<name>_window_secs`; 0 messages turns a window off.
import * as z from 'zod';
import { nonNegativeInt, positiveInt } from '../fields.ts';

export const limitsSchema = z.strictObject({
  sender_messages: nonNegativeInt().default(1000).meta({
    description:
      'Per envelope sender (normalized; a local sender counts under its wallet at every local domain and its alias form).',
  }),
  sender_window_secs: positiveInt().default(3600).meta({ description: '' }),
  recipient_messages: nonNegativeInt()
    .default(200)
    .meta({ description: 'Per recipient wallet, from all senders.' }),
  recipient_window_secs: positiveInt().default(3600).meta({ description: '' }),
  overall_messages: nonNegativeInt()
    .default(10000)
    .meta({ description: "Everything the deployment's MX processes accept together." }),
  overall_window_secs: positiveInt().default(3600).meta({ description: '' }),
  null_sender_messages: nonNegativeInt().default(200).meta({
    description:
      'One deployment-wide bucket for null-envelope-sender (`MAIL FROM:<>`, bounces); replaces the sender window for them.',
  }),
  null_sender_window_secs: positiveInt().default(3600).meta({ description: '' }),
  balance_check_secs: positiveInt()
    .default(5)
    .meta({ description: 'How often the authority balance is read for `[chain] min_authority_lamports`.' }),
});

export type LimitsInput = z.output<typeof limitsSchema>;
