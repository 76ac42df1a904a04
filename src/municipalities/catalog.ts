/**
 * The municipality list in memory. It is the front end's hottest read and only changes with an import
 * or a create, so it is loaded once, paginated from arrays, and reloaded on demand. While nothing is
 * loaded it retries the database now and then, so data imported by another process shows up by itself.
 * Given a fingerprint of the table, `refreshIfChanged` reloads it when another instance or process
 * changed it (the server checks every MUNICIPIOS_REFRESH_SECONDS).
 */
import type { Municipality } from './rules.js';

export const PAGE_SIZE = 30;
const RETRY_EMPTY_AFTER_MS = 5_000;

export interface MunicipalityPage {
  count: number;
  totalPages: number;
  page: number;
  results: Municipality[];
}

export class MunicipalityCatalog {
  private all: Municipality[] = [];
  private byState = new Map<number, Municipality[]>();
  private byCode = new Map<number, Municipality>();
  private lastAttempt = 0;
  private loadedFingerprint: string | undefined;
  /** Increases with every change of the list, so caches of rendered pages know when to drop them. */
  version = 0;

  constructor(
    private readonly fetchAll: () => Promise<Municipality[]>,
    private readonly fingerprint?: () => Promise<string>,
  ) {}

  get size(): number {
    return this.all.length;
  }

  /** Replaces the list with the database's current contents. */
  async reload(): Promise<void> {
    this.lastAttempt = Date.now();
    // Taken before the rows: a change landing in between shows at the next check.
    const fingerprint = await this.fingerprint?.();
    this.replace(await this.fetchAll());
    this.loadedFingerprint = fingerprint;
  }

  /** Reloads if the table changed since the last load (elsewhere: another instance, an import); returns whether it did. */
  async refreshIfChanged(): Promise<boolean> {
    if (!this.fingerprint) return false;
    if ((await this.fingerprint()) === this.loadedFingerprint) return false;
    await this.reload();
    return true;
  }

  /** Reloads only if the list is empty and the last attempt is old enough (cheap on the hot path). */
  async reloadIfEmpty(): Promise<void> {
    if (this.all.length === 0 && Date.now() - this.lastAttempt >= RETRY_EMPTY_AFTER_MS) await this.reload();
  }

  replace(municipalities: Municipality[]): void {
    this.version += 1;
    this.all = [...municipalities].sort((a, b) => a.codigo_ibge - b.codigo_ibge);
    this.byState = new Map();
    this.byCode = new Map(this.all.map((municipality) => [municipality.codigo_ibge, municipality]));
    for (const municipality of this.all) {
      const state = this.byState.get(municipality.codigo_uf) ?? [];
      state.push(municipality);
      this.byState.set(municipality.codigo_uf, state);
    }
  }

  /** One page, 1-based; undefined when the page is past the last one. An empty match has one empty page. */
  page(codigoUf: number | undefined, page: number): MunicipalityPage | undefined {
    const matching = codigoUf === undefined ? this.all : (this.byState.get(codigoUf) ?? []);
    const totalPages = Math.max(1, Math.ceil(matching.length / PAGE_SIZE));
    if (page > totalPages) return undefined;
    const start = (page - 1) * PAGE_SIZE;
    return { count: matching.length, totalPages, page, results: matching.slice(start, start + PAGE_SIZE) };
  }

  /** The municipalities of one state (IBGE code), by code; none for a state the list does not have. */
  inState(codigoUf: number): readonly Municipality[] {
    return this.byState.get(codigoUf) ?? [];
  }

  /** The municipality with this IBGE code, if the list has it. */
  find(code: number): Municipality | undefined {
    return this.byCode.get(code);
  }
}
