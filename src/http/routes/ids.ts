// Path parameters shared by the routes: ids are uuids, so a malformed id is
// a 400 naming it rather than a database error.
import { z } from "zod";

export const uuidParam = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a uuid");
export const idParam = z.object({ id: uuidParam });
