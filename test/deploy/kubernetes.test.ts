import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { localhostAllowedHostnames } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/index.ts';
import { SESSION_IDLE_MS } from '../../src/http/sessions.ts';
import { OPEN_PATHS } from '../../src/http/server.ts';
import { PROJECT_ROOT } from '../helpers/fixtures.ts';
import { tempDir } from '../helpers/temp.ts';

const DIR = path.join(PROJECT_ROOT, 'deploy', 'kubernetes');

interface Manifest {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

const manifests: Manifest[] = readdirSync(DIR)
  .filter((name) => name.endsWith('.yaml'))
  .flatMap((name) =>
    parseAllDocuments(readFileSync(path.join(DIR, name), 'utf8')).map((doc) => {
      expect(doc.errors).toEqual([]);
      return doc.toJS() as Manifest;
    }),
  );
const one = <T>(kind: string) => {
  const found = manifests.filter((m) => m.kind === kind);
  expect(found.length).toBe(1);
  return found[0] as unknown as T;
};

interface Probe {
  httpGet: { path: string; port: string | number; httpHeaders?: Array<{ name: string; value: string }> };
}
interface Container {
  args: string[];
  ports: Array<{ name: string; containerPort: number }>;
  env: Array<{ name: string; value?: string; valueFrom?: { secretKeyRef: { name: string; key: string } } }>;
  readinessProbe: Probe;
  livenessProbe: Probe;
  resources: { requests: { cpu: string; memory: string }; limits: { memory: string } };
  volumeMounts: Array<{ name: string; mountPath: string }>;
}
interface Deployment {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        containers: Container[];
        volumes: Array<{ name: string; configMap?: { name: string }; emptyDir?: object }>;
      };
    };
  };
}

const exampleSecret = parseAllDocuments(
  readFileSync(path.join(DIR, 'secret.example.yaml'), 'utf8'),
)[0]!.toJS() as {
  metadata: { name: string };
  stringData: Record<string, string>;
};

const deployment = one<Deployment>('Deployment');
const container = deployment.spec.template.spec.containers[0]!;
const configMap = one<Manifest & { data: Record<string, string> }>('ConfigMap');
const argOf = (flag: string) => container.args[container.args.indexOf(flag) + 1]!;
const mebibytes = (quantity: string) => Number(/^(\d+)Mi$/.exec(quantity)![1]);

/** Environment variables the server itself reads (beyond the config's references), and where. */
const SERVER_ENV: Record<string, string> = {
  SKILLPIN_LOG_LEVEL: 'src/cli.ts',
  HOME: 'src/git/cli/env.ts',
};

describe('deploy/kubernetes', () => {
  it('runs serve over HTTP on the port the Service and probes use, with the config the ConfigMap holds', () => {
    expect(container.args.slice(0, 1)).toEqual(['serve']);
    const [host, port] = argOf('--http').split(':');
    expect(host).toBe('0.0.0.0');
    expect(container.ports).toEqual([{ name: 'http', containerPort: Number(port) }]);
    const mount = container.volumeMounts.find((m) => m.name === 'config')!;
    const volume = deployment.spec.template.spec.volumes.find((v) => v.name === 'config')!;
    expect(volume.configMap?.name).toBe(configMap.metadata.name);
    expect(Object.keys(configMap.data)).toEqual([path.posix.relative(mount.mountPath, argOf('--config'))]);

    const service = one<{ spec: { selector: object; ports: Array<{ targetPort: string }> } }>('Service');
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
    expect(service.spec.ports.map((p) => p.targetPort)).toEqual(['http']);
  });

  it('probes readiness on /readyz and liveness on /healthz: open paths, with a Host the server accepts', () => {
    expect([container.readinessProbe.httpGet.path, container.livenessProbe.httpGet.path]).toEqual([
      '/readyz',
      '/healthz',
    ]);
    for (const probe of [container.readinessProbe, container.livenessProbe]) {
      expect(OPEN_PATHS.has(probe.httpGet.path)).toBe(true);
      expect(probe.httpGet.port).toBe('http');
      const host = probe.httpGet.httpHeaders?.find((h) => h.name === 'Host')?.value;
      expect(localhostAllowedHostnames()).toContain(host);
    }
  });

  it('holds a valid config whose every secret comes from the Secret, and sets only variables the server reads', () => {
    const dir = tempDir('skillpin-deploy-');
    const file = path.join(dir, 'skillpin.yaml');
    const text = Object.values(configMap.data)[0]!;
    writeFileSync(file, text);
    const referenced = [...text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1]!).sort();
    const fromSecret = container.env.filter((e) => e.valueFrom !== undefined);
    expect(fromSecret.map((e) => e.name).sort()).toEqual(referenced);
    // The example Secret's values: a config they fill in is valid (the Redis URL included).
    const env = Object.fromEntries(
      container.env.map((e) => [e.name, e.value ?? exampleSecret.stringData[e.valueFrom!.secretKeyRef.key]!]),
    );
    const config = loadConfig(file, env);
    const data = container.volumeMounts.find((m) => m.name === 'data')!;
    expect(config.dataDir).toBe(data.mountPath);
    expect(config.auth?.tokens.map((t) => t.name)).toEqual(['ci']);
    for (const { name } of container.env.filter((e) => e.valueFrom === undefined)) {
      const where = SERVER_ENV[name];
      expect(where, `${name} is read by the server`).toBeDefined();
      expect(readFileSync(path.join(PROJECT_ROOT, where!), 'utf8')).toContain(`'${name}'`);
    }

    const secret = exampleSecret;
    for (const { valueFrom } of fromSecret) {
      expect(valueFrom!.secretKeyRef.name).toBe(secret.metadata.name);
      expect(Object.keys(secret.stringData)).toContain(valueFrom!.secretKeyRef.key);
    }
  });

  it('runs replicas with their own dataDir volume, resources set, and sessions kept to one replica', () => {
    expect(deployment.spec.replicas).toBeGreaterThanOrEqual(2);
    const data = deployment.spec.template.spec.volumes.find((v) => v.name === 'data')!;
    expect(data.emptyDir).toBeDefined();
    const { requests, limits } = container.resources;
    expect(mebibytes(requests.memory)).toBeLessThanOrEqual(mebibytes(limits.memory));
    expect(requests.cpu).toMatch(/^\d+m$/);
    const service = one<{
      spec: { sessionAffinity: string; sessionAffinityConfig: { clientIP: { timeoutSeconds: number } } };
    }>('Service');
    expect(service.spec.sessionAffinity).toBe('ClientIP');
    expect(service.spec.sessionAffinityConfig.clientIP.timeoutSeconds).toBe(SESSION_IDLE_MS / 1000);
    const kustomization = one<{ resources: string[] }>('Kustomization');
    const files = readdirSync(DIR);
    for (const resource of kustomization.resources) expect(files).toContain(resource);
    expect(kustomization.resources).not.toContain('secret.example.yaml');
  });
});

describe('deploy/kubernetes/redis (optional)', () => {
  const redis = readdirSync(path.join(DIR, 'redis'))
    .filter((name) => name.endsWith('.yaml'))
    .map(
      (name) => parseAllDocuments(readFileSync(path.join(DIR, 'redis', name), 'utf8'))[0]!.toJS() as Manifest,
    );
  const of = <T>(kind: string) => redis.find((m) => m.kind === kind) as unknown as T;

  it("is the Redis the example Secret's redis-url names, with the password the Secret gives it", () => {
    const url = new URL(exampleSecret.stringData['redis-url']!);
    const service = of<
      Manifest & { spec: { selector: object; ports: Array<{ port: number; targetPort: string }> } }
    >('Service');
    expect([url.protocol, url.hostname, Number(url.port)]).toEqual([
      'redis:',
      service.metadata.name,
      service.spec.ports[0]!.port,
    ]);
    expect(decodeURIComponent(url.password)).toBe(exampleSecret.stringData['redis-password']);
    const server = of<Deployment>('Deployment');
    expect(service.spec.selector).toEqual(server.spec.selector.matchLabels);
    const redisContainer = server.spec.template.spec.containers[0]!;
    expect(redisContainer.ports.map((p) => p.name)).toEqual([service.spec.ports[0]!.targetPort]);
    const password = redisContainer.env.find((e) => e.name === 'REDIS_PASSWORD')!.valueFrom!.secretKeyRef;
    expect(password).toEqual({ name: exampleSecret.metadata.name, key: 'redis-password' });
    expect(redisContainer.args).toContain('$(REDIS_PASSWORD)');
    const kustomization = of<{ resources: string[] }>('Kustomization');
    expect(kustomization.resources.sort()).toEqual(['deployment.yaml', 'service.yaml']);
  });
});

describe('deploy/compose (three replicas, Redis, nginx)', () => {
  const compose = path.join(PROJECT_ROOT, 'deploy', 'compose');
  const file = parseAllDocuments(
    readFileSync(path.join(compose, 'docker-compose.yaml'), 'utf8'),
  )[0]!.toJS() as {
    services: Record<string, { environment?: Record<string, string>; command?: string[] }>;
  };

  it('runs three replicas of a valid config whose every variable the compose file sets, and Redis with that password', () => {
    const replicas = Object.entries(file.services).filter(([name]) => name.startsWith('replica-'));
    expect(replicas.map(([name]) => name)).toEqual(['replica-1', 'replica-2', 'replica-3']);
    // Compose's ${NAME:-default}: what a plain `docker compose up` gives.
    const expand = (value: string) => value.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');
    const env = Object.fromEntries(
      Object.entries(replicas[0]![1].environment!).map(([name, value]) => [name, expand(value)]),
    );
    const config = loadConfig(path.join(compose, 'skillpin.yaml'), env);
    expect(config.coordination?.endpoint).toBe('redis:6379');
    const password =
      file.services['redis']!.command![file.services['redis']!.command!.indexOf('--requirepass') + 1]!;
    expect(decodeURIComponent(new URL(env['REDIS_URL']!).password)).toBe(expand(password));
    const nginx = readFileSync(path.join(compose, 'nginx.conf'), 'utf8');
    for (const [name] of replicas) expect(nginx).toContain(`server ${name}:3917`);
  });
});
