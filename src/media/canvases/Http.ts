import { HttpApiBuilder } from "effect/http-api"
import { CanvasesApi } from "./Api.ts"
import { areaApi } from "../../http/Area.ts"
import { authorize } from "../../auth/Policy.ts"
import { pageRequest } from "../../platform/Pagination.ts"
import * as CanvasChat from "./CanvasChat.ts"
import * as Canvases from "./Canvases.ts"
import * as Renders from "./Renders.ts"
import { answer } from "../../http/Refusals.ts"

const api = areaApi(CanvasesApi)

export const CanvasesLive = HttpApiBuilder.group(api, "canvases", (handlers) =>
  handlers
    .handle("create", ({ payload }) => answer(authorize("canvases:write")(Canvases.create(payload))))
    .handle("list", ({ query }) => answer(authorize("canvases:read")(Canvases.list(pageRequest(query)))))
    .handle("get", ({ params }) => answer(authorize("canvases:read")(Canvases.get(params.canvas_id))))
    .handle("update", ({ params, payload }) => answer(authorize("canvases:write")(Canvases.update(params.canvas_id, payload))))
    .handle("createThread", ({ params, payload }) =>
      answer(authorize("canvases:write")(Canvases.createThread(params.canvas_id, payload))))
    .handle("listThreads", ({ params, query }) =>
      answer(authorize("canvases:read")(Canvases.listThreads(params.canvas_id, pageRequest(query)))))
    .handle("chat", ({ params, payload }) =>
      answer(authorize("canvases:write")(CanvasChat.chat(params.canvas_id, params.thread_id, payload))))
    .handle("listMessages", ({ params, query }) =>
      answer(authorize("canvases:read")(CanvasChat.listMessages(params.canvas_id, params.thread_id, pageRequest(query)))))
    .handle("listVersions", ({ params, query }) =>
      answer(authorize("canvases:read")(Canvases.listVersions(params.canvas_id, pageRequest(query)))))
    .handle("getVersion", ({ params }) =>
      answer(authorize("canvases:read")(Canvases.getVersion(params.canvas_id, params.version))))
    .handle("restoreVersion", ({ params }) =>
      answer(authorize("canvases:write")(Canvases.restoreVersion(params.canvas_id, params.version))))
    .handle("render", ({ params, payload }) =>
      answer(authorize("canvases:write")(Renders.renderCanvas(params.canvas_id, payload))))
    .handle("listRenders", ({ params, query }) =>
      answer(authorize("canvases:read")(Renders.listRenders(params.canvas_id, pageRequest(query))))))
