/** What the API root announces: the assistants a deployment offers (ASSISTANTS) and where its documentation is published (DOCS_URL). */
import { z } from 'zod';

/** An assistant the deployment offers (the API root lists them); the bounds are the contract's. */
const assistant = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,49}$/, 'must be 1-50 lower-case letters, digits, _ or -, starting with a letter or digit'),
    name: z.string().trim().min(1, 'must not be blank').max(100),
    description: z.string().trim().max(500).default(''),
  })
  .strict();

export type Assistant = z.infer<typeof assistant>;

/** ASSISTANTS: a JSON array of `{"id", "name", "description"}`, ids unique. */
const assistants = z
  .string()
  .transform((value, ctx): unknown => {
    try {
      return JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array such as [{"id":"estrategista","name":"Estrategista","description":"..."}]' });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(assistant, { message: 'must be a JSON array of {"id", "name", "description"} objects' })
      .max(50)
      .refine((list) => new Set(list.map((item) => item.id)).size === list.length, 'must not repeat an id'),
  );

export const rootEnvironment = z.object({
  ASSISTANTS: assistants.optional(),
  DOCS_URL: z
    .string()
    .url('must be an absolute URL such as https://palanque.app/docs/api')
    .regex(/^https?:\/\//, 'must be an http(s) URL')
    .optional(),
});

/** The API root's links beyond the API's own. */
export interface RootLinkSettings {
  /** The assistants the API root announces (ASSISTANTS); empty when none. */
  assistants: Assistant[];
  /** Where the API's documentation is published (DOCS_URL); the API root links to it when set. */
  docsUrl: string | undefined;
}

export function rootLinksOf(env: z.output<typeof rootEnvironment>): RootLinkSettings {
  return { assistants: env.ASSISTANTS ?? [], docsUrl: env.DOCS_URL };
}
