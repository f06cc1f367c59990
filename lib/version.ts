// This build's release of Leasehold: package.json's version.
import packageJson from '../package.json' with { type: 'json' };

export const LEASEHOLD_VERSION: string = packageJson.version;
