// SPDX-License-Identifier: GPL-2.0
/*
 * hwpmc_pmc9_client: a kernel module that uses NetBSD's pmc(9) API of
 * hwpmc.ko (include/kernel/hwpmc_pmc9.h), for selftests/pmc9_test.  Built
 * beside hwpmc.ko; never shipped.
 *
 * /sys/kernel/debug/hwpmc-pmc9-client/cmd: write one command, read its
 * result ("ret N" with N 0 or a negative errno, or "value V", or the
 * "info" line).  Commands (pids in the writer's namespace; pid 0: the
 * kernel counter where the API takes a NULL task):
 *   info                          n N cputype T types T0,T1,...
 *   conf PID CTR EVENT CONFIG RESET   pmc_configure_counter
 *   enable PID CTR | disable PID CTR
 *   running PID CTR | configured PID CTR | enabled PID
 *   get PID CTR FLAGS              pmc_get_counter_value
 *   accumulate PPID PID
 *   kalloc CTR EVENT CONFIG RESET | kfree CTR
 *   prof_start CTR EVENT CONFIG | prof_stop CTR
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/uaccess.h>

#include "../../include/kernel/hwpmc_pmc9.h"

static DEFINE_MUTEX(client_lock);
static char client_result[512];
static struct dentry *client_dir;

/* The task of @pid (a reference), NULL for 0, ERR_PTR(-ESRCH). */
static struct task_struct *client_task(int pid)
{
	struct task_struct *t;
	struct pid *p;

	if (!pid)
		return NULL;
	p = find_get_pid(pid);
	t = p ? get_pid_task(p, PIDTYPE_PID) : NULL;
	put_pid(p);
	return t ? t : ERR_PTR(-ESRCH);
}

static void client_put(struct task_struct *t)
{
	if (!IS_ERR_OR_NULL(t))
		put_task_struct(t);
}

static int client_info(void)
{
	int n = pmc_get_num_counters(), i, len;

	len = scnprintf(client_result, sizeof(client_result),
			"n %d cputype %d types", n, pmc_get_counter_type(-1));
	for (i = 0; i < n; i++)
		len += scnprintf(client_result + len,
				 sizeof(client_result) - len, "%s%d",
				 i ? "," : " ", pmc_get_counter_type(i));
	return 0;
}

static int client_run(char *cmd)
{
	struct pmc_counter_cfg cfg = { };
	struct task_struct *t = NULL, *t2 = NULL;
	unsigned long long ev, conf, reset;
	int pid, pid2, ctr, flags, ret;
	char op[16];
	u64 v;

	if (sscanf(cmd, "%15s", op) != 1)
		return -EINVAL;
	if (!strcmp(op, "info"))
		return client_info();
	if (sscanf(cmd, "%*s %d", &pid) != 1)
		return -EINVAL;
	if (!strcmp(op, "kalloc") || !strcmp(op, "prof_start")) {
		reset = 0;
		if (sscanf(cmd, "%*s %d %llu %llu %llu", &ctr, &ev, &conf,
			   &reset) < 3)
			return -EINVAL;
		cfg.event_id = PMC9_EVID(ev, conf);
		cfg.reset_value = reset;
		ret = op[0] == 'k' ? pmc_alloc_kernel_counter(ctr, &cfg)
				   : pmc_start_profiling(ctr, &cfg);
		goto out;
	}
	if (!strcmp(op, "kfree") || !strcmp(op, "prof_stop")) {
		ret = op[0] == 'k' ? pmc_free_kernel_counter(pid)
				   : pmc_stop_profiling(pid);
		goto out;
	}
	t = client_task(pid);
	if (IS_ERR(t))
		return PTR_ERR(t);
	if (!strcmp(op, "enabled")) {
		ret = PMC_ENABLED(t);
		goto out;
	}
	if (!strcmp(op, "accumulate")) {
		if (sscanf(cmd, "%*s %*d %d", &pid2) != 1) {
			ret = -EINVAL;
			goto out;
		}
		t2 = client_task(pid2);
		ret = IS_ERR(t2) ? PTR_ERR(t2) : pmc_accumulate(t, t2);
		goto out;
	}
	if (sscanf(cmd, "%*s %*d %d", &ctr) != 1) {
		ret = -EINVAL;
		goto out;
	}
	if (!strcmp(op, "conf")) {
		if (sscanf(cmd, "%*s %*d %*d %llu %llu %llu", &ev, &conf,
			   &reset) != 3) {
			ret = -EINVAL;
			goto out;
		}
		cfg.event_id = PMC9_EVID(ev, conf);
		cfg.reset_value = reset;
		ret = pmc_configure_counter(t, ctr, &cfg);
	} else if (!strcmp(op, "enable")) {
		ret = pmc_enable_counter(t, ctr);
	} else if (!strcmp(op, "disable")) {
		ret = pmc_disable_counter(t, ctr);
	} else if (!strcmp(op, "running")) {
		ret = pmc_counter_isrunning(t, ctr);
	} else if (!strcmp(op, "configured")) {
		ret = pmc_counter_isconfigured(t, ctr);
	} else if (!strcmp(op, "get")) {
		flags = 0;
		if (sscanf(cmd, "%*s %*d %*d %d", &flags) != 1) {
			ret = -EINVAL;
			goto out;
		}
		ret = pmc_get_counter_value(t, ctr, flags, &v);
		if (!ret) {
			scnprintf(client_result, sizeof(client_result),
				  "value %llu", (unsigned long long)v);
			client_put(t);
			return 0;
		}
	} else {
		ret = -EINVAL;
	}
out:
	client_put(t);
	client_put(t2);
	scnprintf(client_result, sizeof(client_result), "ret %d", ret);
	return 0;
}

static ssize_t client_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	char buf[128];
	int err;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = 0;
	mutex_lock(&client_lock);
	err = client_run(buf);
	if (err)
		scnprintf(client_result, sizeof(client_result), "ret %d", err);
	mutex_unlock(&client_lock);
	return len;
}

static ssize_t client_read(struct file *file, char __user *ubuf, size_t len,
			   loff_t *ppos)
{
	char buf[sizeof(client_result) + 1];
	int n;

	mutex_lock(&client_lock);
	n = scnprintf(buf, sizeof(buf), "%s\n", client_result);
	mutex_unlock(&client_lock);
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations client_fops = {
	.owner	= THIS_MODULE,
	.read	= client_read,
	.write	= client_write,
	.llseek	= default_llseek,
};

static int __init client_init(void)
{
	client_dir = debugfs_create_dir("hwpmc-pmc9-client", NULL);
	debugfs_create_file("cmd", 0600, client_dir, NULL, &client_fops);
	return 0;
}

static void __exit client_exit(void)
{
	debugfs_remove_recursive(client_dir);
}

module_init(client_init);
module_exit(client_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hwpmc pmc(9) client, for selftests/pmc9_test");
