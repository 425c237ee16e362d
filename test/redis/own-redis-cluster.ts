/** A 3-master Redis Cluster of the test's own (no replicas, nothing on disk), on free ports. */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../../bench/chaos/own-redis.js';

export class OwnRedisCluster {
  readonly #processes: ChildProcess[] = [];

  private constructor(
    readonly ports: number[],
    readonly dir: string,
  ) {}

  static async start(masters = 3): Promise<OwnRedisCluster> {
    const ports: number[] = [];
    while (ports.length < masters) {
      const port = await freePort();
      // The cluster bus listens on port + 10000: both must be free.
      if (port + 10_000 < 65_536 && !ports.includes(port)) ports.push(port);
    }
    const cluster = new OwnRedisCluster(ports, mkdtempSync(join(tmpdir(), 'duebatch-cluster-')));
    for (const port of ports) {
      cluster.#processes.push(spawn('redis-server', [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`,
        '--dir', cluster.dir, '--save', '', '--appendonly', 'no',
      ], { stdio: 'ignore' }));
    }
    for (const port of ports) await waitForPing(port);
    const created = spawnSync('redis-cli', ['--cluster', 'create', ...ports.map((p) => `127.0.0.1:${p}`), '--cluster-replicas', '0', '--cluster-yes'], {
      encoding: 'utf8', timeout: 30_000,
    });
    if (created.status !== 0) throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    for (const port of ports) await waitForClusterOk(port);
    return cluster;
  }

  get nodes(): { host: string; port: number }[] {
    return this.ports.map((port) => ({ host: '127.0.0.1', port }));
  }

  async stop(): Promise<void> {
    for (const child of this.#processes) {
      if (child.exitCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

async function waitForPing(port: number): Promise<void> {
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => undefined);
  for (let attempt = 0; ; attempt++) {
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return;
    } catch (error) {
      if (attempt > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

async function waitForClusterOk(port: number): Promise<void> {
  const client = new Redis(port, '127.0.0.1');
  try {
    for (let attempt = 0; attempt < 200; attempt++) {
      if (String(await client.cluster('INFO')).includes('cluster_state:ok')) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`cluster node ${port} never reported cluster_state:ok`);
  } finally {
    client.disconnect();
  }
}
