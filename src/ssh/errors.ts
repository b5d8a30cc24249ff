// What can go wrong reaching a host, as typed errors whose messages an
// operator (and the agent) can act on. None of them carries key material.

export class SshError extends Error {
  override name = "SshError";
}

/** The host presented a key other than the pinned one: refused before authentication. */
export class HostKeyMismatchError extends SshError {
  override name = "HostKeyMismatchError";
  constructor(
    readonly target: string,
    readonly expected: string,
    readonly presented: string,
  ) {
    super(
      `refused to connect to ${target}: its SSH host key is ${presented} but the targets file pins ${expected}. ` +
        "This can mean the host was reinstalled or that someone is intercepting the connection; " +
        "verify the key on the host (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub) before updating hostKeySha256.",
    );
  }
}

/** Could not connect or authenticate. */
export class SshConnectError extends SshError {
  override name = "SshConnectError";
}

/** The connection dropped while a command ran: its outcome is unknown. */
export class SshConnectionLostError extends SshError {
  override name = "SshConnectionLostError";
}
