-- Failed sign-ins counted in the store (lib/db/sign-in-limits.ts), so that every console
-- process of one store shares one allowance per user name and per client address.

-- CreateTable
CREATE TABLE "SignInLimit" (
    "key" TEXT NOT NULL,
    "taken" INTEGER NOT NULL,
    "resetAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "SignInLimit_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "SignInLimit_resetAt_idx" ON "SignInLimit"("resetAt");
