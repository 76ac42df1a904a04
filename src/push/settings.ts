/** Web Push's settings: the VAPID keys pushes are signed with (without them no push is sent). */
import { z } from 'zod';
import { checkVapidKeys, type VapidKeys } from './sender.js';

export const pushEnvironment = z.object({
  VAPID_PUBLIC_KEY: z.string().regex(/^[A-Za-z0-9_-]{87}$/, 'must be a VAPID public key, base64url (npx web-push generate-vapid-keys)').optional(),
  VAPID_PRIVATE_KEY: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a VAPID private key, base64url (npx web-push generate-vapid-keys)').optional(),
  VAPID_SUBJECT: z.string().regex(/^(mailto:|https:\/\/)/, 'must be a mailto: or https: URL the push services may contact').default('mailto:no-reply@palanque.app'),
});

type PushEnvironment = z.output<typeof pushEnvironment>;

/** The two halves come as a pair, of one key pair (web-push's checks, then the public key derived from the private one). */
export function checkVapidPair(env: PushEnvironment, ctx: z.RefinementCtx): void {
  if (Boolean(env.VAPID_PUBLIC_KEY) !== Boolean(env.VAPID_PRIVATE_KEY)) {
    ctx.addIssue({ code: 'custom', path: [env.VAPID_PUBLIC_KEY ? 'VAPID_PRIVATE_KEY' : 'VAPID_PUBLIC_KEY'], message: 'must be set with its other half (VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY come as a pair)' });
  } else if (env.VAPID_PUBLIC_KEY && env.VAPID_PRIVATE_KEY) {
    try {
      checkVapidKeys({ publicKey: env.VAPID_PUBLIC_KEY, privateKey: env.VAPID_PRIVATE_KEY, subject: env.VAPID_SUBJECT });
    } catch (error) {
      ctx.addIssue({ code: 'custom', path: ['VAPID_PRIVATE_KEY'], message: (error as Error).message });
    }
  }
}

export function vapidKeysOf(env: PushEnvironment): VapidKeys | undefined {
  return env.VAPID_PUBLIC_KEY && env.VAPID_PRIVATE_KEY ? { publicKey: env.VAPID_PUBLIC_KEY, privateKey: env.VAPID_PRIVATE_KEY, subject: env.VAPID_SUBJECT } : undefined;
}
