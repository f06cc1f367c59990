-- Sign-in (lib/auth): users signed in by OIDC have no password; sessions say how they were
-- signed in and from where; API tokens carry their own role and may belong to no user (a
-- token made with `leasehold tokens create` for Prometheus or a script).

-- AlterTable
ALTER TABLE "User" ALTER COLUMN "passwordHash" DROP NOT NULL;
ALTER TABLE "User" ADD COLUMN "oidcIssuer" TEXT;
ALTER TABLE "User" ADD COLUMN "oidcSubject" TEXT;
ALTER TABLE "User" ADD COLUMN "updatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "Session" ADD COLUMN "authMethod" TEXT NOT NULL DEFAULT 'password';
ALTER TABLE "Session" ADD COLUMN "address" TEXT;

-- AlterTable
ALTER TABLE "ApiToken" ALTER COLUMN "userId" DROP NOT NULL;
ALTER TABLE "ApiToken" ADD COLUMN "role" "Role" NOT NULL DEFAULT 'viewer';
ALTER TABLE "ApiToken" ADD COLUMN "createdBy" TEXT;

-- DropIndex
DROP INDEX "ApiToken_userId_name_key";

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_name_key" ON "ApiToken"("name");

-- CreateIndex
CREATE UNIQUE INDEX "User_oidcIssuer_oidcSubject_key" ON "User"("oidcIssuer", "oidcSubject");
