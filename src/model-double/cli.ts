// `npm run model-double`: serves the Messages API double with the demo
// policy on loopback and prints the ANTHROPIC_BASE_URL to use.
// MODEL_DOUBLE_PORT picks the port (default 8089). Ctrl-C stops it.
import { demoPolicy } from "./demo-policy.js";
import { startMessagesDouble } from "./messages-double.js";

const port = Number(process.env.MODEL_DOUBLE_PORT ?? 8089);
const double = await startMessagesDouble({ policy: demoPolicy, port });
process.stdout.write(`Messages API double on ${double.url}\nANTHROPIC_BASE_URL=${double.url} ANTHROPIC_API_KEY=double npm start\n`);
const stop = () => void double.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
