// A real OpenLDAP server (Debian's slapd) for the LDAP tests: a throwaway
// slapd.conf with an mdb database under a temp dir, entries loaded with
// slapadd, slapd in the foreground on loopback, stopped by stop(). Optional TLS
// with a private CA made by openssl. slapd's "stats" log (every BIND with its
// DN) is kept, so tests can count the binds the server really saw.
//
// slapd is required: CI installs it (.ci/run). A missing slapd fails loudly.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'ldapts';
import { freePort } from '../../infra/local/dynamodb-local.js';

const SLAPD = '/usr/sbin/slapd';
const SLAPADD = '/usr/sbin/slapadd';
export const SUFFIX = 'dc=example,dc=org';
export const PEOPLE_BASE = `ou=people,${SUFFIX}`;

export interface Person {
  uid: string;
  password: string;
  cn: string;
  mail?: string;
  /** The attribute its DN is named by: uid (uid=<uid>,…) unless cn (cn=<cn>,…, for a DN template by cn). */
  rdn?: 'uid' | 'cn';
  /** Its entry may be bound but not read, by itself or anyone (slapd answers such a read noSuchObject). */
  unreadable?: boolean;
}

/** A person's DN in the test directory. */
export const personDn = (p: Person) => (p.rdn === 'cn' ? `cn=${p.cn},${PEOPLE_BASE}` : `uid=${p.uid},${PEOPLE_BASE}`);

export interface TestCa {
  dir: string;
  /** The CA certificate, PEM text. */
  caPem: string;
  caFile: string;
  certFile: string;
  keyFile: string;
}

export interface Slapd {
  /** ldap://127.0.0.1:<port> */
  url: string;
  /** ldaps://127.0.0.1:<port>, when started with TLS. */
  ldapsUrl?: string;
  /**
   * DNs of every BIND the server has seen so far. Syncs with the log first: a
   * marker bind made now is logged after every bind that has already been
   * answered, so waiting for it means the log holds them all.
   */
  binds(): Promise<string[]>;
  stop(): Promise<void>;
}

function requireSlapd(): void {
  for (const binary of [SLAPD, SLAPADD]) {
    if (!existsSync(binary)) {
      throw new Error(
        `${binary} is missing: the LDAP tests drive a real OpenLDAP server. Install it with "apt-get install slapd ldap-utils" (CI does, in .ci/run).`,
      );
    }
  }
}

/** A private CA and a server certificate for 127.0.0.1 signed by it (openssl). */
export async function makeTestCa(): Promise<TestCa> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-ldap-ca-'));
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Fleet Health test private CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  await writeFile(
    join(dir, 'ext.cnf'),
    'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n',
  );
  run('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'ext.cnf');
  return {
    dir,
    caPem: await readFile(join(dir, 'ca.pem'), 'utf8'),
    caFile: join(dir, 'ca.pem'),
    certFile: join(dir, 'server.pem'),
    keyFile: join(dir, 'server.key'),
  };
}

/** An LDIF line: a value outside printable ASCII (a name in another script, a control character) base64-encoded, as LDIF asks. */
const attribute = (name: string, value: string) => (/^[\x20-\x7E]*$/.test(value) ? `${name}: ${value}` : `${name}:: ${Buffer.from(value).toString('base64')}`);

function ldif(people: Person[]): string {
  const entries = [
    `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\no: Example\ndc: example`,
    `dn: ${PEOPLE_BASE}\nobjectClass: organizationalUnit\nou: people`,
    ...people.map((p) =>
      [
        `dn: ${personDn(p)}`,
        'objectClass: inetOrgPerson',
        `uid: ${p.uid}`,
        attribute('cn', p.cn),
        attribute('sn', p.cn.split(' ').at(-1)!),
        ...(p.mail ? [`mail: ${p.mail}`] : []),
        `userPassword: ${p.password}`,
      ].join('\n'),
    ),
  ];
  return `${entries.join('\n\n')}\n`;
}

function waitForPort(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child.exitCode !== null) return reject(new Error(`slapd exited with ${child.exitCode}:\n${output()}`));
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve();
      });
      socket.once('error', () => {
        socket.destroy();
        if (Date.now() > deadline) return reject(new Error(`slapd did not listen on ${port}:\n${output()}`));
        setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

export async function startSlapd(people: Person[], tls?: TestCa): Promise<Slapd> {
  requireSlapd();
  const dir = await mkdtemp(join(tmpdir(), 'fleet-slapd-'));
  await mkdir(join(dir, 'db'));
  const conf = join(dir, 'slapd.conf');
  await writeFile(
    conf,
    [
      'include /etc/ldap/schema/core.schema',
      'include /etc/ldap/schema/cosine.schema',
      'include /etc/ldap/schema/inetorgperson.schema',
      // Debian builds the backends as modules.
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      `pidfile ${join(dir, 'slapd.pid')}`,
      ...(tls ? [`TLSCACertificateFile ${tls.caFile}`, `TLSCertificateFile ${tls.certFile}`, `TLSCertificateKeyFile ${tls.keyFile}`] : []),
      // With TLS, a password bind over a plain connection is refused (confidentialityRequired), as a hardened directory does.
      ...(tls ? ['security simple_bind=128'] : []),
      'database mdb',
      'maxsize 10485760',
      `suffix "${SUFFIX}"`,
      `rootdn "cn=root,${SUFFIX}"`,
      'rootpw root-secret-not-used-by-tests',
      `directory ${join(dir, 'db')}`,
      'access to attrs=userPassword by self read by anonymous auth by * none',
      ...people.filter((p) => p.unreadable).map((p) => `access to dn.exact="${personDn(p)}" by anonymous auth by * none`),
      'access to * by self read by users read by anonymous auth',
      '',
    ].join('\n'),
  );
  await writeFile(join(dir, 'people.ldif'), ldif(people));
  execFileSync(SLAPADD, ['-f', conf, '-l', join(dir, 'people.ldif')], { stdio: 'pipe' });

  let port = 0;
  let ldapsPort: number | undefined;
  let child!: ChildProcess;
  let log = '';
  let markers = 0;
  // A free port is free when asked, not when slapd binds it: another process may take it in between
  // (CI once saw `listen(ldaps://…) failed errno=98`). Then slapd exits, and it is started again on others.
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    ldapsPort = tls ? await freePort() : undefined;
    const urls = [`ldap://127.0.0.1:${port}/`, ...(ldapsPort ? [`ldaps://127.0.0.1:${ldapsPort}/`] : [])];
    // -d 256: stay in the foreground and log "stats" (connections, BINDs with their DN) to stderr.
    child = spawn(SLAPD, ['-h', urls.join(' '), '-f', conf, '-d', '256'], { stdio: ['ignore', 'ignore', 'pipe'] });
    log = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (log += chunk));
    try {
      await waitForPort(port, child, () => log);
      if (ldapsPort) await waitForPort(ldapsPort, child, () => log);
      break;
    } catch (error) {
      const taken = child.exitCode !== null && log.includes('errno=98');
      if (child.exitCode === null) child.kill('SIGKILL');
      if (!taken || attempt === 3) throw error;
    }
  }

  return {
    url: `ldap://127.0.0.1:${port}`,
    ldapsUrl: ldapsPort ? `ldaps://127.0.0.1:${ldapsPort}` : undefined,
    binds: async () => {
      const marker = `cn=log-marker-${++markers},${SUFFIX}`;
      const client = new Client({ url: `ldap://127.0.0.1:${port}`, timeout: 5000 });
      await client.bind(marker, 'x').catch(() => undefined); // refused: only its log line matters
      await client.unbind().catch(() => undefined);
      for (let i = 0; i < 200 && !log.includes(`dn="${marker}"`); i++) await new Promise((r) => setTimeout(r, 25));
      if (!log.includes(`dn="${marker}"`)) throw new Error(`slapd never logged the marker bind:\n${log}`);
      // One line per request (`method=`): a successful bind logs a second line (`mech=`), not another bind.
      return [...log.matchAll(/ BIND dn="([^"]*)" method=/g)].map((m) => m[1]!).filter((dn) => !dn.startsWith('cn=log-marker-'));
    },
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
