package cli

import "github.com/Azure/azure-sdk-for-go/sdk/azcore"

type azcoreCred = azcore.TokenCredential
