// The Proxmox SSH double for tests. It lives in src/demo/proxmox-double.ts
// so that `npm run demo` can use it too; see that file for what it simulates
// and how to script faults (host.handle(match, handler)).
export * from "../../src/demo/proxmox-double.js";
