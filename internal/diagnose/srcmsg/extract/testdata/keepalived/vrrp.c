/* Fixture in keepalived's style (lib/logger.h log_message, lib/parser.h report_config_error). */
#include "logger.h"

static void
vrrp_state_become_master(vrrp_t *vrrp)
{
	log_message(LOG_INFO, "(%s) Entering MASTER STATE", vrrp->iname);
	log_message(LOG_DEBUG, "(%s) debug details are not indexed", vrrp->iname);
}

int
netlink_socket(nl_handle_t *nl)
{
	if (nl->fd < 0) {
		log_message(LOG_ERR, "Netlink: Cannot open netlink socket : (%s)",
			    strerror(errno));
		return -1;
	}
	log_message(LOG_WARNING, "Received %" PRIu32 " bytes, "
				 "more than the expected %zu", len, sz);
	return 0;
}

static void
garp_handler(const vector_t *strvec)
{
	report_config_error(CONFIG_GENERAL_ERROR, "vrrp_garp_interval '%s' is invalid", strvec_slot(strvec, 1));
	report_config_error(CONFIG_WARNING, "vrrp_garp_interval is deprecated"
			    " - use vrrp_garp_master_refresh");
}
