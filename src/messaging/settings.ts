/**
 * SMS settings: the provider's API and its timeouts, the most numbers a campaign may list, when a message
 * without a receipt counts as final, and when contacts are erased after an election. A pasted recipient
 * list (`recipient_list_str` of sendSmsCampaign and previewSmsCampaign) travels in the JSON body, so
 * BODY_LIMIT bounds how many numbers it can carry, as the contract's maxLength does (docs/operations.md,
 * "Settings checked against each other"): `checkBodyLimit` holds them together.
 */
import { z } from 'zod';

export const CAMPAIGN_BODY = {
  /** `recipient_list_str`'s maxLength in the contract (spec/, bundled into sdk/openapi.json; test/config-consistency.test.ts holds them equal). */
  listMaxCharacters: 200_000,
  /** A number as pasted from a spreadsheet: `+5521987654321` and a line break, 15 characters. */
  numberCharacters: 15,
  /** The same in the JSON body: the line break is written `\n`, 16 bytes. */
  numberBytes: 16,
  /**
   * The rest of the body at most: the message (1,600 characters, up to 4 bytes each in UTF-8), the title
   * (120) and the declarations, with room to spare. It is also the smallest BODY_LIMIT accepted.
   */
  otherBytes: 16 * 1024,
} as const;

/** The most pasted numbers a body of `bodyLimit` bytes can carry, and the most the contract's maxLength lets through. */
export function pastedListCapacity(bodyLimit: number): { byBodyLimit: number; byContract: number } {
  return {
    byBodyLimit: Math.max(0, Math.floor((bodyLimit - CAMPAIGN_BODY.otherBytes) / CAMPAIGN_BODY.numberBytes)),
    byContract: Math.floor(CAMPAIGN_BODY.listMaxCharacters / CAMPAIGN_BODY.numberCharacters),
  };
}

export const smsEnvironment = z.object({
  SMS_PROVIDER_URL: z
    .string()
    .url('must be an absolute URL such as https://api.twilio.com')
    .regex(/^https?:\/\/[^?#]*[^/?#]$/, 'must be http(s), without a trailing slash, query or fragment')
    .default('https://api.twilio.com'),
  SMS_SEND_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  SMS_MAX_RECIPIENTS: z.coerce.number().int().min(1).max(100_000).default(10_000),
  // A month at most: a receipt later than that is not coming.
  SMS_RECEIPT_TIMEOUT_HOURS: z.coerce.number().int().min(1).max(720).default(72),
  // Days after the certification (diplomação) of an entity's election before its contacts are erased
  // (contact-retention.ts): a setting of the deployment, not a figure of the law.
  CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION: z.coerce.number().int().min(31).max(10 * 366).default(180),
});

/** The SMS settings as the configuration names them. */
export interface SmsEnvironmentSettings {
  /** SMS_PROVIDER_URL: the SMS provider's API (its simulator in tests). */
  smsProviderUrl: string;
  /** SMS_SEND_TIMEOUT_MS: how long a call to the SMS provider may take; an earlier call is over once this (and a margin) has passed. */
  smsSendTimeoutMs: number;
  /** SMS_MAX_RECIPIENTS: the most numbers one campaign request may list. */
  smsMaxRecipients: number;
  /** SMS_RECEIPT_TIMEOUT_HOURS, in milliseconds: a message the provider took and sent no receipt for in this long counts as final for its campaign. */
  smsReceiptTimeoutMs: number;
  /** CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION: days after the certification of an entity's election before its contacts are erased (a setting, not a legal figure). */
  contactRetentionDaysAfterCertification: number;
}

export function smsSettingsOf(env: z.output<typeof smsEnvironment>): SmsEnvironmentSettings {
  return {
    smsProviderUrl: env.SMS_PROVIDER_URL,
    smsSendTimeoutMs: env.SMS_SEND_TIMEOUT_MS,
    smsMaxRecipients: env.SMS_MAX_RECIPIENTS,
    smsReceiptTimeoutMs: env.SMS_RECEIPT_TIMEOUT_HOURS * 3_600_000,
    contactRetentionDaysAfterCertification: env.CONTACT_RETENTION_DAYS_AFTER_CERTIFICATION,
  };
}

/**
 * BODY_LIMIT against what must fit in a body: refused below CAMPAIGN_BODY.otherBytes (0 would refuse
 * every body: express answers 413 to the smallest), or when it cannot carry a campaign's pasted list of
 * as many numbers as both SMS_MAX_RECIPIENTS and the contract allow (such a list would be refused 413,
 * not 422 naming the cap, and the cap would be a lie).
 */
export function checkBodyLimit(env: { BODY_LIMIT?: number; SMS_MAX_RECIPIENTS: number }, ctx: z.RefinementCtx): void {
  if (env.BODY_LIMIT === undefined) return;
  const bytes = env.BODY_LIMIT;
  if (bytes < CAMPAIGN_BODY.otherBytes) {
    ctx.addIssue({ code: 'custom', path: ['BODY_LIMIT'], message: `is ${bytes} bytes; must be at least 16kb (${CAMPAIGN_BODY.otherBytes} bytes): an SMS campaign's longest message with its other fields must fit in a request body` });
    return;
  }
  const { byBodyLimit, byContract } = pastedListCapacity(bytes);
  const wanted = Math.min(env.SMS_MAX_RECIPIENTS, byContract);
  if (byBodyLimit < wanted) {
    const needed = wanted * CAMPAIGN_BODY.numberBytes + CAMPAIGN_BODY.otherBytes;
    ctx.addIssue({
      code: 'custom',
      path: ['BODY_LIMIT'],
      message:
        `is ${bytes} bytes, which carries an SMS campaign of at most ${byBodyLimit} pasted numbers (${CAMPAIGN_BODY.numberBytes} bytes a number plus ${CAMPAIGN_BODY.otherBytes} for the rest), ` +
        `fewer than the ${wanted} that SMS_MAX_RECIPIENTS (${env.SMS_MAX_RECIPIENTS}) and the contract (${byContract}) allow: ` +
        `set BODY_LIMIT to at least ${Math.ceil(needed / 1024)}kb, or SMS_MAX_RECIPIENTS to at most ${byBodyLimit}`,
    });
  }
}
