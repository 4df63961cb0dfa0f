// A self-signed certificate for 127.0.0.1 and localhost, made with openssl at test time: no private key in the
// repository, and nothing that expires under a test suite kept for years.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface TestCertificate {
  certFile: string;
  keyFile: string;
  /** The PEM certificate, for clients to trust (`ca`). */
  cert: string;
}

/** Writes `<name>.cert.pem` and `<name>.key.pem` into `dir` (P-256: generated in milliseconds). */
export async function selfSignedCertificate(dir: string, name = 'bridge'): Promise<TestCertificate> {
  const certFile = join(dir, `${name}.cert.pem`);
  const keyFile = join(dir, `${name}.key.pem`);
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2'];
  args.push(
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  );
  try {
    await promisify(execFile)('openssl', args);
  } catch (err) {
    throw new Error(
      `these tests make their certificate with openssl (Debian: apt-get install openssl): ${(err as Error).message}`,
      { cause: err },
    );
  }
  return { certFile, keyFile, cert: await readFile(certFile, 'utf8') };
}
