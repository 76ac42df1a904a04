/**
 * The container image and its deployments, held to the one script that builds the image. No container
 * daemon runs here: CI runs scripts/build-image.sh itself and starts what it made (scripts/image-smoke.sh,
 * .ci/run). This file checks, without building anything, that the Dockerfile builds only through that
 * script and runs its output as the smoke test does (node, not npm; a user that is not root; SIGTERM;
 * the health check on /livez, never /readyz); that .dockerignore keeps what the script reads; that
 * compose.yaml runs the roles behind a balancer reading the documented configuration; and that the
 * systemd unit is a real file that docs/operations.md points to.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFileSync(`${root}${file}`, 'utf8');

interface Instruction {
  stage: string;
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions (continuation lines joined, comments dropped), each with its stage's name. */
function instructions(): Instruction[] {
  const joined = read('Dockerfile')
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ');
  let stage = '';
  return joined.split('\n').flatMap((line) => {
    const match = /^(\w+)\s+(.*)$/.exec(line.trim());
    if (!match) return [];
    const [, keyword, args] = match as unknown as [string, string, string];
    if (keyword.toUpperCase() === 'FROM') stage = / AS (\w+)$/i.exec(args)?.[1] ?? '';
    return [{ stage, keyword: keyword.toUpperCase(), args }];
  });
}

describe('Dockerfile', () => {
  const all = instructions();
  const of = (stage: string, keyword: string) => all.filter((instruction) => instruction.stage === stage && instruction.keyword === keyword);

  it('builds in a build stage through scripts/build-image.sh alone, into the directory the runtime stage copies', () => {
    expect(all.filter((instruction) => instruction.keyword === 'FROM').map((instruction) => instruction.stage)).toEqual(['build', 'runtime']);
    const runs = of('build', 'RUN');
    expect(runs).toHaveLength(1);
    const built = /\bscripts\/build-image\.sh\s+(\S+)$/.exec(runs[0]!.args);
    expect(built, runs[0]!.args).not.toBeNull();
    // No build step of its own beside the script's: CI's run of the script is the image's build.
    expect(all.map((instruction) => instruction.args).join('\n')).not.toMatch(/\bnpm (ci|install|run|prune)\b|\btsc\b/);
    expect(of('runtime', 'COPY').map((instruction) => instruction.args)).toContain(`--from=build ${built![1]} /app`);
    expect(of('runtime', 'WORKDIR').map((instruction) => instruction.args)).toEqual(['/app']);
  });

  it('runs node dist/src/server.js directly, as a user that is not root, stopped by SIGTERM, its health on /livez', () => {
    const command = JSON.parse(of('runtime', 'CMD')[0]!.args) as string[];
    expect(command[0]).toBe('node');
    expect(command.at(-1)).toBe('dist/src/server.js');
    expect(of('runtime', 'ENTRYPOINT')).toEqual([]);
    const users = of('runtime', 'USER').map((instruction) => instruction.args);
    expect(users).toHaveLength(1);
    expect(users[0]).not.toMatch(/^(root|0)(:|$)/);
    expect(of('runtime', 'STOPSIGNAL').map((instruction) => instruction.args)).toEqual(['SIGTERM']);
    const health = of('runtime', 'HEALTHCHECK').map((instruction) => instruction.args);
    expect(health).toHaveLength(1);
    expect(health[0]).toContain('/livez');
    expect(health[0]).not.toContain('/readyz');
    expect(of('runtime', 'ENV').map((instruction) => instruction.args).join(' ')).toMatch(/NODE_ENV=production/);
    // The smoke test starts the tree the same way.
    expect(read('scripts/image-smoke.sh')).toContain('node --max-semi-space-size=8 dist/src/server.js');
    expect(command).toEqual(['node', '--max-semi-space-size=8', 'dist/src/server.js']);
  });

  it('.dockerignore keeps out the local installs and builds, and nothing the script reads', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    for (const path of ['node_modules', 'dist', '.git', '.env', 'data']) expect(ignored).toContain(path);
    const script = read('scripts/build-image.sh');
    const needed = ['package.json', 'package-lock.json', 'sdk/package.json', 'packages/rules/package.json', 'tsconfig.json', 'tsconfig.build.json', 'packages', 'src', 'sdk', 'cli', 'spec', 'scripts'];
    for (const path of needed) {
      expect(ignored.some((pattern) => pattern === path || pattern === path.split('/')[0]), `${path} is needed by the build`).toBe(false);
    }
    // What tsc builds is what the context keeps.
    const build = JSON.parse(read('tsconfig.build.json')) as { include: string[] };
    for (const folder of build.include) expect(needed).toContain(folder);
    expect(script).toMatch(/^npm ci /m);
    expect(script).toMatch(/^npm run build$/m);
    expect(script).toMatch(/npm prune --omit=dev/);
  });
});

describe('compose.yaml', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, any> };
  const services = compose.services;

  it('runs two api instances and a worker of this image, with the same SECRETS_KEY, PostgreSQL and Redis', () => {
    expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'haproxy', 'nginx', 'postgres', 'redis', 'worker']);
    const instances = ['api-1', 'api-2', 'worker'].map((name) => services[name]);
    expect(instances.map((service) => service.environment.PALANQUE_ROLE)).toEqual(['api', 'api', 'worker']);
    for (const service of instances) {
      expect(service.build).toBe('.');
      expect(service.environment).toMatchObject({ NODE_ENV: 'production', REDIS_URL: 'redis://redis:6379', TRUST_PROXY: '1' });
      expect(service.environment.SECRETS_KEY).toMatch(/^\$\{SECRETS_KEY:\?/);
      expect(service.environment.DATABASE_URL).toMatch(/@postgres:5432\/palanque$/);
      expect(service.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' } });
      // The image's own health check (/livez) stands: no service overrides it with /readyz.
      expect(JSON.stringify(service.healthcheck ?? {})).not.toContain('readyz');
      expect(service.ports).toBeUndefined();
    }
  });

  it('puts nginx with the documented configuration in front of the api instances, and HAProxy reading /readyz', () => {
    expect(services.nginx.volumes).toEqual(['./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro']);
    const nginx = read('deploy/nginx.conf');
    expect(nginx.match(/^\s*server (\S+) max_fails=3 fail_timeout=10s;/gm)?.map((line) => line.trim().split(' ')[1])).toEqual(['api-1:8000', 'api-2:8000']);
    // docs/scale-out.md's proxy settings, as documented.
    const documented = read('docs/scale-out.md');
    for (const directive of ['least_conn;', 'keepalive 32;', 'proxy_next_upstream error timeout;', 'proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;', 'client_max_body_size 1m;']) {
      expect(documented).toContain(directive);
      expect(nginx).toContain(directive);
    }
    expect(nginx).not.toMatch(/proxy_next_upstream[^;]*http_503/);
    const haproxy = read('deploy/haproxy.cfg');
    expect(services.haproxy.volumes).toEqual(['./deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro']);
    expect(haproxy).toMatch(/option httpchk GET \/readyz/);
    expect(haproxy).toMatch(/http-check expect status 200/);
    expect(haproxy.match(/^\s*server \S+ (\S+) check$/gm)?.map((line) => line.trim().split(' ')[2])).toEqual(['api-1:8000', 'api-2:8000']);
  });
});

describe('systemd', () => {
  it('is a unit file running the built tree with node, which docs/operations.md points to instead of an inline copy', () => {
    const unit = read('deploy/palanque.service');
    expect(unit).toMatch(/^ExecStart=\/usr\/bin\/node --max-semi-space-size=8 dist\/src\/server\.js$/m);
    expect(unit).toMatch(/^KillSignal=SIGTERM$/m);
    expect(unit).toMatch(/^User=palanque$/m);
    expect(unit).toMatch(/\/readyz/);
    expect(read('deploy/palanque-livez.service')).toMatch(/\/livez/);
    const operations = read('docs/operations.md');
    const section = operations.slice(operations.indexOf('## systemd'), operations.indexOf('\n## ', operations.indexOf('## systemd') + 1));
    expect(section).toContain('deploy/palanque.service');
    expect(section).not.toContain('[Service]');
  });
});
