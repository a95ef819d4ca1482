/**
 * Where credentials usually live on a Linux machine: the system's own (password hashes, sudo
 * rules, SSH host keys, TLS private keys, saved Wi-Fi passwords) and those in every person's
 * home (SSH and GPG keys, cloud and registry logins, password stores, browser profiles with
 * their saved passwords and cookies). The sandbox hides each of them that exists and would
 * otherwise be visible, whatever FS_ALLOWED_PATHS says.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/** System files and folders holding secrets (absolute). */
export const SYSTEM_CREDENTIAL_PATHS: readonly string[] = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/security/opasswd',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/ssl/private',
  '/etc/NetworkManager/system-connections',
  '/etc/wpa_supplicant',
];

/** Folders whose entries with "key" in the name are private keys (`/etc/ssh/ssh_host_*_key`). */
const KEY_FOLDERS: readonly string[] = ['/etc/ssh'];

/** Credential files and folders relative to a home folder. */
export const HOME_CREDENTIAL_PATHS: readonly string[] = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.npmrc',
  '.pypirc',
  '.netrc',
  '.git-credentials',
  '.config/gh',
  '.config/hub',
  '.password-store',
  '.local/share/keyrings',
  '.pgpass',
  '.my.cnf',
  '.vault-token',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.terraform.d/credentials.tfrc.json',
  '.config/rclone',
  // Browser profiles: saved passwords, cookies and session tokens.
  '.mozilla',
  '.config/google-chrome',
  '.config/google-chrome-beta',
  '.config/google-chrome-unstable',
  '.config/chromium',
  '.config/BraveSoftware',
  '.config/microsoft-edge',
  '.config/vivaldi',
  '.config/opera',
  'snap/firefox',
  'snap/chromium',
  'snap/brave',
  '.var/app/org.mozilla.firefox',
  '.var/app/org.chromium.Chromium',
  '.var/app/com.google.Chrome',
  '.var/app/com.brave.Browser',
];

/**
 * Every home folder of the machine: the ones named in `/etc/passwd` (or `passwdFile`) and
 * `extra` (Navi's own $HOME). The root folder `/` is left out: a service account "living" in
 * `/` does not make `/.ssh` a credential folder worth a mount.
 */
export function homeFolders(extra: readonly (string | undefined)[], passwdFile = '/etc/passwd'): string[] {
  const homes = new Set<string>();
  try {
    for (const line of readFileSync(passwdFile, 'utf8').split('\n')) {
      const home = line.split(':')[5];
      if (home && isAbsolute(home)) homes.add(resolve(home));
    }
  } catch {
    // no passwd file: only the homes named by the caller
  }
  for (const home of extra) if (home && isAbsolute(home)) homes.add(resolve(home));
  homes.delete('/');
  return [...homes];
}

/** Absolute candidate paths of credentials (system ones and those of every home); they may not exist. */
export function credentialPaths(homes: readonly string[]): string[] {
  const paths = [...SYSTEM_CREDENTIAL_PATHS];
  for (const folder of KEY_FOLDERS) {
    try {
      for (const name of readdirSync(folder)) if (/key/i.test(name)) paths.push(join(folder, name));
    } catch {
      // folder absent
    }
  }
  for (const home of homes) for (const rel of HOME_CREDENTIAL_PATHS) paths.push(join(home, rel));
  return paths;
}
