// Command ocm puts the Open Cluster Management components that update-status's e2e tests need
// into one binary, built from the OCM source by hack/build-ocm.sh (this file is copied into the
// extracted tree as cmd/update-status-ocm/main.go; it is not part of upstream OCM).
//
//	ocm controller  the hub's registration controller      (upstream: registration controller)
//	ocm manager     the hub's add-on manager                (upstream: addon manager)
//	ocm placement   the hub's placement controller          (upstream: placement controller)
//	ocm webhook     the add-on conversion webhook server    (upstream: addon webhook-server)
//	ocm agent       the klusterlet agent, registration+work (upstream: registration-operator agent)
//
// The feature gates are registered as the upstream mains do: the hub gates on the global flag
// set (--feature-gates of controller and manager), the spoke gates by spoke.NewKlusterletAgentCmd
// on its own flag set.
package main

import (
	goflag "flag"
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/logs"

	ocmfeature "open-cluster-management.io/api/feature"

	"open-cluster-management.io/ocm/pkg/cmd/hub"
	"open-cluster-management.io/ocm/pkg/cmd/spoke"
	"open-cluster-management.io/ocm/pkg/cmd/webhook"
	"open-cluster-management.io/ocm/pkg/features"
	"open-cluster-management.io/ocm/pkg/version"
)

func main() {
	pflag.CommandLine.SetNormalizeFunc(utilflag.WordSepNormalizeFunc)
	pflag.CommandLine.AddGoFlagSet(goflag.CommandLine)

	logs.AddFlags(pflag.CommandLine)
	logs.InitLogs()
	defer logs.FlushLogs()

	// cmd/registration/main.go registers the hub registration gates; the add-on manager's set
	// (AddonManagement) is what the cluster-manager operator passes to the add-on manager.
	utilruntime.Must(features.HubMutableFeatureGate.Add(ocmfeature.DefaultHubRegistrationFeatureGates))
	utilruntime.Must(features.HubMutableFeatureGate.Add(ocmfeature.DefaultHubAddonManagerFeatureGates))
	features.HubMutableFeatureGate.AddFlag(pflag.CommandLine)

	if err := newCommand().Execute(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
}

func newCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ocm",
		Short: "Open Cluster Management hub and klusterlet components for local tests",
		Run: func(cmd *cobra.Command, args []string) {
			_ = cmd.Help()
			os.Exit(1)
		},
	}
	if v := version.Get().String(); len(v) == 0 {
		cmd.Version = "<unknown>"
	} else {
		cmd.Version = v
	}

	controller := hub.NewRegistrationController()
	controller.Use = "controller"
	manager := hub.NewAddonManager()
	manager.Use = "manager"
	agent := spoke.NewKlusterletAgentCmd()
	agent.Use = "agent"
	addonWebhook := webhook.NewAddonWebhook()
	addonWebhook.Use = "webhook"
	// cmd/placement/main.go: `placement controller` (no feature gate of its own is read by the
	// scheduler: DefaultHubPlacementFeatureGates only switch the operator's debug server).
	placement := hub.NewPlacementController()
	placement.Use = "placement"

	cmd.AddCommand(controller, manager, placement, agent, addonWebhook)
	return cmd
}
