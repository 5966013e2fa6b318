import { ShadowplaneError } from '@shadowplane/contracts';

/**
 * The first nats-server release whose KV compare-and-set is safe on replicated (R>1) buckets.
 * Before it (2.9.x, e.g. Debian's 2.9.10), several writers that expect the same revision of an R3
 * key can all succeed, so a CAS-guarded ledger grants more than its limit; fixed in 2.10.0.
 */
export const CAS_SAFE_NATS_VERSION = '2.10.0';

/** Compares dotted numeric versions (`2.10.0` vs `2.9.10`, a leading `v` and a `-suffix` ignored): negative, 0 or positive. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .replace(/^v/, '')
      .split('-')[0]!
      .split('.')
      .map((x) => Number(x) || 0);
  const pa = parts(a);
  const pb = parts(b);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * Refuses to run the budget ledger (or any other CAS-guarded state) on a nats-server with the
 * replicated-bucket CAS race.
 * @param version the version the server reported at connect (`Bus.serverVersion`, e.g. `2.15.3`)
 * @throws ShadowplaneError `nats_server_unsupported` naming the version and the fix, when it is
 *   older than {@link CAS_SAFE_NATS_VERSION} or unknown
 */
export function assertCasSafeServer(version: string): void {
  if (/^v?\d+\.\d+\.\d+/.test(version) && compareVersions(version, CAS_SAFE_NATS_VERSION) >= 0) return;
  throw new ShadowplaneError(
    'nats_server_unsupported',
    `nats-server ${version || '(unknown version)'} is older than ${CAS_SAFE_NATS_VERSION}: its KV compare-and-set can let concurrent writers ` +
      `succeed on a replicated bucket, which would overspend the budget ledger. Upgrade every NATS server to ${CAS_SAFE_NATS_VERSION} or later ` +
      '(`make nats-server` builds the pinned release into .bin/).',
    { details: { server_version: version, min_version: CAS_SAFE_NATS_VERSION } },
  );
}

/**
 * Keeps {@link assertCasSafeServer} true after the first connection: the client reconnects by
 * itself, possibly to another server of the list or a downgraded one, so every reconnect's server
 * version (`INFO.version`) is checked again. On a server with the CAS race `onUnsafe` is called
 * with the `nats_server_unsupported` error; the role then stops rather than run its ledger there.
 * @param nc the connection (`Bus.nc`); the watch ends when it closes
 * @returns a function that stops the watch
 */
export function watchCasSafeServer(
  nc: { status(): AsyncIterable<{ type: string }>; info?: { version?: string } | undefined },
  onUnsafe: (err: ShadowplaneError) => void,
): () => void {
  let stopped = false;
  const statuses = nc.status();
  void (async () => {
    for await (const st of statuses) {
      if (stopped) break;
      if (st.type !== 'reconnect') continue;
      try {
        assertCasSafeServer(nc.info?.version ?? '');
      } catch (e) {
        onUnsafe(e as ShadowplaneError);
      }
    }
  })().catch(() => undefined);
  return () => {
    stopped = true;
  };
}
