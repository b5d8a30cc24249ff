// What the page says when Nomos runs as `npm run demo` (NOMOS_DEMO=1), so
// nobody mistakes the simulation for their infrastructure.
import { DEPLOY_REQUEST } from "./deployment-policy.js";

export const DEMO_NOTICE =
  "This is a demo. The model is a scripted stand-in (no API key is used) and the Proxmox node pve1 is simulated: " +
  `nothing real is created. Ask: "${DEPLOY_REQUEST}", approve the plan once, and watch it finish on its own.`;
