// The certificate and key of TLS_CERT_FILE and TLS_KEY_FILE, checked before the bridge listens: Node's own errors
// ("error:0480006C:PEM routines::no start line", "key values mismatch") name neither the variable nor the file.
import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** A start-up failure of TLS, already one line naming the variable (O11). */
export class TlsError extends Error {}

export interface TlsFiles {
  /** The PEM certificate, any intermediate certificates after it. */
  cert: Buffer;
  key: Buffer;
  /** When the certificate stops being valid (logged at start, so an expired one is seen before clients see it). */
  validTo: Date;
}

const READ_REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: "permission denied (the bridge's user cannot read it)",
  EISDIR: 'it is a folder, not a file',
};

function read(variable: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'unknown';
    throw new TlsError(`cannot read ${variable} ${file}: ${READ_REASONS[code] ?? (err as Error).message} (${code})`);
  }
}

function parse<T>(variable: string, file: string, what: string, make: () => T): T {
  try {
    return make();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // OpenSSL 3 reports a missing passphrase as an interrupted read.
    const encrypted = code === 'ERR_MISSING_PASSPHRASE' || code === 'ERR_OSSL_CRYPTO_INTERRUPTED_OR_CANCELLED';
    const why = encrypted
      ? 'the key is encrypted; give the bridge an unencrypted key (readable by its user only)'
      : `it is not ${what}`;
    throw new TlsError(`${variable} ${file}: ${why} (${code ?? (err as Error).message})`);
  }
}

/** Reads and checks both files: each parses, and the key is the certificate's. Throws TlsError. */
export function readTlsFiles(certFile: string, keyFile: string): TlsFiles {
  const cert = read('TLS_CERT_FILE', certFile);
  const key = read('TLS_KEY_FILE', keyFile);
  const x509 = parse('TLS_CERT_FILE', certFile, 'a PEM certificate', () => new X509Certificate(cert));
  const privateKey: KeyObject = parse('TLS_KEY_FILE', keyFile, 'a PEM private key', () => createPrivateKey(key));
  if (!x509.checkPrivateKey(privateKey)) {
    throw new TlsError(
      `TLS_KEY_FILE ${keyFile} is not the key of the certificate in TLS_CERT_FILE ${certFile} (${x509.subject.replace(/\n/g, ', ')}); give the pair that belongs together`,
    );
  }
  return { cert, key, validTo: new Date(x509.validTo) };
}
