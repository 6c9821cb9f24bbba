import { Layer } from "effect"
import { area } from "../../http/Area.ts"
import { LandingPagesApi } from "./Api.ts"
import { LandingPagesLive } from "./Http.ts"
import { PagesRepo } from "./PagesRepo.ts"
import { PageTraffic } from "./PageTraffic.ts"
import { PublicPagesApi } from "./PublicApi.ts"
import { PublicPagesLive } from "./PublicHttp.ts"
import { PublishedPages } from "./Visitors.ts"

export const PagesArea = area({
  name: "pages",
  groups: [LandingPagesApi, PublicPagesApi],
  handlers: [LandingPagesLive, PublicPagesLive],
  repositories: [PagesRepo.layer, PublishedPages.layer.pipe(Layer.provide(PagesRepo.layer)), PageTraffic.layer]
})
