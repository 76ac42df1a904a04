/**
 * Exact request types: openapi-fetch's call signatures with an exactness check on what is sent.
 *
 * openapi-fetch infers the init of a call (`{ params, body }`) as a generic constrained by the
 * operation's types, and a generic's argument is never checked for excess properties: a misspelled
 * body field (`nm_urnaa`) or an unknown query parameter compiles, and the server drops or refuses it
 * at run time. Here the init is checked once more against the operation: every key of `body`,
 * `params.query` and `params.path` (at any depth of the body, in arrays too) that the operation does
 * not declare is mapped to `never`, so the call does not compile and the error points at that key.
 * Everything else (response inference, `parseAs`, optional or required init) is openapi-fetch's own.
 *
 * The types are written here rather than imported from openapi-typescript-helpers, so the SDK's
 * declarations need nothing that is not a dependency of the SDK itself.
 */
import type { Client, FetchResponse, MaybeOptionalInit } from 'openapi-fetch';

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';
type MediaType = `${string}/${string}`;

/** The paths that have an operation for this method (openapi-typescript marks the others `?: never`). */
export type PathsWithMethod<Paths, Method extends HttpMethod> = {
  [Path in keyof Paths]: Paths[Path] extends { [M in Method]: unknown } ? Path : never;
}[keyof Paths];

type RequiredKeysOf<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T];

/** openapi-fetch's final init: optional when nothing in it is required; other fetch options allowed. */
type InitParam<Init> = RequiredKeysOf<Init> extends never ? [(Init & { [key: string]: unknown })?] : [Init & { [key: string]: unknown }];

/** Every key of any member of a union (`keyof` of a union gives only the keys all members share). */
type KeysOfUnion<T> = T extends unknown ? keyof T : never;

/** The type of `Key` in whichever members of the union `T` declare it. */
type ValueAt<T, Key extends PropertyKey> = T extends unknown ? (Key extends keyof T ? T[Key] : never) : never;

/**
 * `Sent` with every property that `Declared` does not have turned into `never`, into nested objects and
 * array items. `Declared` may be a union (an object or null, one of several shapes): a key is known when
 * any member declares it. An open schema (an index signature) declares every key.
 */
export type Exact<Declared, Sent> = Sent extends readonly (infer SentItem)[]
  ? NonNullable<Declared> extends readonly (infer DeclaredItem)[]
    ? Exact<DeclaredItem, SentItem>[]
    : Sent
  : Sent extends object
    ? { [Key in keyof Sent]: Key extends KeysOfUnion<NonNullable<Declared>> ? Exact<ValueAt<NonNullable<Declared>, Key>, Sent[Key]> : never }
    : Sent;

/** The init with exactness checked where a typo matters: the body, the query and the path parameters. */
export type ExactInit<Init, Declared> = Init & {
  [Key in keyof Init]: Key extends 'body'
    ? Exact<ValueAt<Declared, 'body'>, Init[Key]>
    : Key extends 'params'
      ? ExactParams<NonNullable<ValueAt<Declared, 'params'>>, Init[Key]>
      : Init[Key];
};

type ExactParams<Declared, Sent> = Sent extends object
  ? {
      [Key in keyof Sent]: Key extends 'query' | 'path' ? Exact<ValueAt<Declared, Key>, Sent[Key]> : Sent[Key];
    }
  : Sent;

/** `client.GET(url, init)` and the other methods, checked for exactness. */
export type ExactClientMethod<Paths extends Record<string, any>, Method extends HttpMethod, Media extends MediaType = MediaType> = <
  Path extends PathsWithMethod<Paths, Method>,
  Init extends MaybeOptionalInit<Paths[Path], Method>,
>(
  url: Path,
  ...init: InitParam<ExactInit<Init, MaybeOptionalInit<Paths[Path], Method>>>
) => Promise<FetchResponse<Paths[Path][Method], Init, Media>>;

/** `client.request(method, url, init)`, checked for exactness. */
export type ExactClientRequestMethod<Paths extends Record<string, any>, Media extends MediaType = MediaType> = <
  Method extends HttpMethod,
  Path extends PathsWithMethod<Paths, Method>,
  Init extends MaybeOptionalInit<Paths[Path], Method>,
>(
  method: Method,
  url: Path,
  ...init: InitParam<ExactInit<Init, MaybeOptionalInit<Paths[Path], Method>>>
) => Promise<FetchResponse<Paths[Path][Method], Init, Media>>;

/** openapi-fetch's client with every call checked for exactness. */
export interface ExactClient<Paths extends Record<string, any>, Media extends MediaType = MediaType>
  extends Pick<Client<Paths, Media>, 'use' | 'eject'> {
  request: ExactClientRequestMethod<Paths, Media>;
  GET: ExactClientMethod<Paths, 'get', Media>;
  PUT: ExactClientMethod<Paths, 'put', Media>;
  POST: ExactClientMethod<Paths, 'post', Media>;
  DELETE: ExactClientMethod<Paths, 'delete', Media>;
  OPTIONS: ExactClientMethod<Paths, 'options', Media>;
  HEAD: ExactClientMethod<Paths, 'head', Media>;
  PATCH: ExactClientMethod<Paths, 'patch', Media>;
  TRACE: ExactClientMethod<Paths, 'trace', Media>;
}
